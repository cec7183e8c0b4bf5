#!/usr/bin/env bash
# Build the real bank project by project (resumable: a project with a stats file is
# skipped). Run from the repository root with forgegym installed; two queues in parallel
# use both cores of a 2-core machine (each has its own sandbox pool):
#
#   OUT=path/to/bank bash benchmarks/real_bank/build_queue.sh a &
#   OUT=path/to/bank bash benchmarks/real_bank/build_queue.sh b &
#
# The pins (and each project's sha256) are those of catalog.json; --with names the test
# dependencies a project uses without declaring them.
set -u
OUT="${OUT:-src/forgegym/envs/bugfix/data/real}"
LIMIT="${LIMIT:-1500}"
declare -A WITH=(
    [funcy]="whatever" [glom]="pyyaml tomli face boltons attrs" [humanize]="freezegun"
    [python-dateutil]="hypothesis freezegun attrs" [pyrsistent]="hypothesis"
    [natsort]="hypothesis" [packaging]="hypothesis pretend tomli_w" [python-dotenv]="sh click"
    [marshmallow]="simplejson" [croniter]="pytz tzlocal" [itsdangerous]="freezegun"
    [attrs]="hypothesis pympler cloudpickle" [munch]="pyyaml" [textdistance]="hypothesis"
    [pyparsing]="railroad-diagrams jinja2" [iso8601]="hypothesis pytz"
)
case "${1:-a}" in
a) specs="more-itertools==11.2.1 toolz==1.2.0 boltons==26.2.0 cachetools==8.0.2 humanize==4.17.0
   parse==1.22.4 sqlparse==0.6.1 tomlkit==0.15.2 pyparsing==3.3.3 voluptuous==0.16.0 schema==0.7.8
   natsort==8.4.0 croniter==7.0.0 addict==2.4.0 pytimeparse==1.1.10 jsonpointer==3.12 wcwidth==0.9.4" ;;
b) specs="funcy==2.1 python-dateutil==4.0.0 semver==3.1.2 glom==25.12.0 inflection==0.5.1
   python-slugify==9.2.0 isodate==0.7.2 munch==4.0.0 pyrsistent==0.20.0 marshmallow==4.4.0
   click==8.5.1 attrs==26.1.0 packaging==26.4 pathspec==1.1.1 python-dotenv==1.2.4
   itsdangerous==2.2.0 simplejson==4.3.0 textdistance==4.6.3 asttokens==3.0.2 pluggy==1.7.0" ;;
esac
for spec in $specs; do
    name=${spec%%==*}
    extra=()
    for dep in ${WITH[$name]:-}; do extra+=(--with "$dep"); done
    echo "=== $spec $(date -u +%T)"
    timeout "$LIMIT" forgegym tasks build --from-pypi "$spec" "${extra[@]}" --out "$OUT" \
        --max-candidates "${CANDIDATES:-600}" --max-tasks "${TASKS:-300}"
    echo "=== $spec done rc=$? $(date -u +%T)"
done
