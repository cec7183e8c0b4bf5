#!/usr/bin/env bash
# Build the real bank project by project (resumable: a project with a stats file is
# skipped). Run from the repository root with forgegym installed:
#
#   VENVS=path/to/per-project/venvs CACHE=path/to/sdist-cache OUT=path/to/bank \
#       bash benchmarks/real_bank/build_queue.sh
#
# VENVS/NAME/bin/python is the interpreter with NAME's test dependencies (see
# catalog.json's test_deps); without VENVS the current interpreter is used.
set -u
CACHE="${CACHE:-$HOME/.cache/forgegym/sdists}"
OUT="${OUT:-benchmarks/real_bank/bank}"
for spec in six==1.17.0 python-slugify==9.2.0 funcy==2.1 toolz==1.2.0 cachetools==8.0.2 \
    inflection==0.5.1 parse==1.22.4 semver==3.1.2 glom==25.12.0 boltons==26.2.0 \
    humanize==4.17.0 more-itertools==11.2.1; do
    name=${spec%%==*}
    python_args=()
    if [ -n "${VENVS:-}" ]; then
        python_args=(--python "$VENVS/$name/bin/python")
    fi
    echo "=== $spec $(date -u +%T)"
    nice -n 5 timeout 2400 forgegym tasks build --from-pypi "$spec" "${python_args[@]}" \
        --cache-dir "$CACHE" --out "$OUT" --max-candidates 150 --max-tasks 80
    echo "=== $spec done rc=$? $(date -u +%T)"
done
