#!/usr/bin/env bash
# Build real-bank projects one after another (resumable: a project with a stats file is
# skipped). Run from the repository root with forgegym installed, one queue per core:
#
#   OUT=path/to/bank bash benchmarks/real_bank/build_queue.sh toolz==1.2.0 boltons==26.2.0 ... &
#
# The pins are catalog.json's (the sha256 is checked against the file fetched and
# recorded); WITH names the test dependencies a project uses without declaring them. The
# options used are written into each project's record (``options``), so a rebuild with
# them gives the same files.
set -u
OUT="${OUT:-src/forgegym/envs/bugfix/data/real}"
LIMIT="${LIMIT:-2400}"
declare -A WITH=(
    [funcy]="whatever" [glom]="pyyaml tomli face boltons attrs" [humanize]="freezegun"
    [python-dateutil]="hypothesis freezegun attrs" [pyrsistent]="hypothesis"
    [natsort]="hypothesis" [packaging]="hypothesis pretend tomli_w" [python-dotenv]="sh click"
    [marshmallow]="simplejson" [croniter]="pytz tzlocal" [itsdangerous]="freezegun"
    [attrs]="hypothesis pympler cloudpickle" [munch]="pyyaml" [textdistance]="hypothesis"
    [pyparsing]="railroad-diagrams jinja2" [iso8601]="hypothesis pytz"
    [portion]="sortedcontainers" [intervaltree]="sortedcontainers" [hyperlink]="idna"
    [furl]="orderedmultidict six" [parsimonious]="regex" [python-json-logger]="freezegun"
    [soupsieve]="beautifulsoup4" [oauthlib]="blinker cryptography pyjwt"
    [mistletoe]="parameterized" [w3lib]="hypothesis" [anytree]="test2ref"
)
for spec in "$@"; do
    name=${spec%%==*}
    extra=()
    for dep in ${WITH[$name]:-}; do extra+=(--with "$dep"); done
    echo "=== $spec $(date -u +%T)"
    timeout "$LIMIT" forgegym tasks build --from-pypi "$spec" "${extra[@]}" --out "$OUT" \
        --max-candidates "${CANDIDATES:-1500}" --max-tasks "${TASKS:-700}" \
        --max-per-function "${PER_FUNCTION:-10}"
    echo "=== $spec done rc=$? $(date -u +%T)"
done
