# Shared helpers of the command-line tests (sourced; not a test itself: CTest runs *.sh only).
set -u
bin=${1:?usage: bash test.sh /path/to/frictionlab}
[[ -x "$bin" ]] || { echo "not executable: $bin"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fl-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
nfail=0

fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
pass() { echo "ok: $*"; }
finish() {
  if ((nfail > 0)); then
    echo "$nfail check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}

# expect_fail NAME EXPECTED_RC NEEDLE OUTDIR -- ARGS...: runs `frictionlab ARGS`, wants exit
# status EXPECTED_RC (or any non-zero when "nonzero"), NEEDLE in stderr, and OUTDIR absent.
expect_fail() {
  local name=$1 want=$2 needle=$3 outdir=$4
  shift 5
  "$bin" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  if [[ "$want" == nonzero && $rc -eq 0 ]] || [[ "$want" != nonzero && $rc -ne $want ]]; then
    fail "$name: exit status $rc, expected $want; stderr: $(head -c 400 "$tmp/stderr")"
    return
  fi
  if ! grep -qF -- "$needle" "$tmp/stderr"; then
    fail "$name: stderr does not name '$needle': $(head -c 400 "$tmp/stderr")"
    return
  fi
  if [[ -n "$outdir" && -e "$outdir" ]]; then
    fail "$name: $outdir exists after a failed run"
    return
  fi
  if [[ -n "$outdir" ]] && ls -a "$(dirname "$outdir")" | grep -q 'staging'; then
    fail "$name: a staging folder was left beside $outdir"
    return
  fi
  pass "$name (exit $rc, message names '$needle')"
}

# registered solver names, from `list solvers` ("name: summary" lines at column 0)
solver_names() { "$bin" list solvers | awk -F: '/^[a-z0-9][a-z0-9._-]*: / {print $1}'; }

# same_rows DIR_A DIR_B (steps.csv and iters.csv) or FILE_A FILE_B: the same rows in the same
# order, timing columns aside; the one rule of scripts/same-rows. Exit 1 with the first
# difference on stderr.
fl_same_rows_py=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/same-rows
same_rows() { /usr/bin/python3 "$fl_same_rows_py" "$1" "$2"; }
