#!/bin/bash
# Build the real bank project by project (resumable: a project with a stats file is skipped).
cd /work/wt/task-factory
for spec in six==1.17.0 python-slugify==9.2.0 funcy==2.1 toolz==1.2.0 cachetools==8.0.2 inflection==0.5.1 parse==1.22.4 semver==3.1.2 glom==25.12.0 boltons==26.2.0 humanize==4.17.0 more-itertools==11.2.1; do
  name=${spec%%==*}
  echo "=== $spec $(date -u +%T)"
  PYTHONPATH=$PWD/src nice -n 5 timeout 2400 /work/main/.venv/bin/python -m forgegym.cli tasks build --from-pypi $spec --python /work/prep/venvs/$name/bin/python --cache-dir /work/prep/sdist-cache --out /tmp/tf/bank --max-candidates 150 --max-tasks 80
  echo "=== $spec done rc=$? $(date -u +%T)"
done
