#!/usr/bin/env bash
# Installs one wheel load (a folder .whl/loads/loadN written by scripts/fetch_wheels.sh) into
# SITEDIR, offline, on the GPU machine. A wheel cut into pieces that travel in different loads is
# installed once its last piece has come: each load's pieces wait in STAGING (default
# /tmp/wheel-parts) until then; whole wheels are checked against the SHA-256 of MANIFEST.tsv.
# Running a load again is harmless (what is installed stays, nothing is installed twice).
# Each wheel is installed by pip into a folder of its own, then merged into SITEDIR, so wheels
# that share a top-level folder (the CuTe DSL's parts share nvidia_cutlass_dsl/) may come in any
# order. SITEDIR/env.sh, rewritten every time, puts SITEDIR and the paths its .pth files add
# (pip does not read .pth files of a PYTHONPATH folder) on PYTHONPATH:
#
#   scripts/install_wheel_load.sh LOADDIR SITEDIR [STAGING]
#   . SITEDIR/env.sh && python3 scripts/bench_peers.py ...
#
# Prints what it installed, what was there already and which pieces (in which loads) are still
# awaited. Exit status: 0 when every wheel whose pieces are all here is installed (wheels still
# waiting for pieces are not a failure), 1 when one could not be joined or installed, 2 on bad
# arguments. docs/benchmarking.md, "Peers live on a machine without network", has the sequence.
set -uo pipefail

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "install_wheel_load: $*" >&2; exit 2; }

case ${1:-} in -h|--help) usage; exit 0 ;; esac
(($# == 2 || $# == 3)) || die "expected LOADDIR SITEDIR [STAGING]; got $# arguments (see --help)"
loaddir=${1%/} site=${2%/} staging=${3:-/tmp/wheel-parts}
manifest=$loaddir/MANIFEST.tsv
[[ -d $loaddir ]] || die "LOADDIR '$loaddir': no such folder"
[[ -f $manifest ]] || die "LOADDIR '$loaddir': no MANIFEST.tsv in it (expected a load folder" \
  "written by scripts/fetch_wheels.sh, such as .whl/loads/load1)"
load=$(basename "$loaddir")
command -v sha256sum > /dev/null || die "sha256sum not found"

declare -A sha count pieces piece_load load_rank
wheels=() loads=()
while IFS=$'\t' read -r kind f1 _ f3 f4 _; do
  case $kind in
    wheel) wheels+=("$f1"); sha[$f1]=$f3; count[$f1]=$f4 ;;
    piece) pieces[$f1]+="$f4 "; piece_load[$f4]=$f3 ;;
    load) load_rank[$f1]=${#loads[@]}; loads+=("$f1") ;;
    ''|\#*) ;;
    *) die "$manifest: unknown line kind '$kind'" ;;
  esac
done < "$manifest"
[[ -n ${load_rank[$load]+x} ]] || die "'$load' is not a load of $manifest (its loads: ${loads[*]})"
mkdir -p "$staging" "$site/.wheel-loads" || die "cannot create '$staging' or '$site'"
site=$(cd "$site" && pwd)

installed() { [[ -f $site/.wheel-loads/$1 && $(cat "$site/.wheel-loads/$1") == "${sha[$1]}" ]]; }

# Stage this load's pieces of the wheels not installed yet.
staged=0
for wheel in "${wheels[@]}"; do
  installed "$wheel" && continue
  for piece in ${pieces[$wheel]}; do
    [[ ${piece_load[$piece]} == "$load" ]] || continue
    [[ -f $loaddir/$piece ]] || die "$loaddir/$piece: named by its MANIFEST.tsv but missing"
    cp -f "$loaddir/$piece" "$staging/$piece" || die "cannot copy $piece to $staging"
    staged=$((staged + 1))
  done
done
echo "install_wheel_load: $load ($((load_rank[$load] + 1)) of ${#loads[@]}): $staged files staged" \
     "in $staging"

installed_now=() installed_before=() waiting=() failed=() earlier_missing=()
for wheel in "${wheels[@]}"; do
  if installed "$wheel"; then
    installed_before+=("$wheel")
    continue
  fi
  missing=()
  for piece in ${pieces[$wheel]}; do
    [[ -f $staging/$piece ]] && continue
    missing+=("$piece (${piece_load[$piece]})")
    ((load_rank[${piece_load[$piece]}] < load_rank[$load])) && earlier_missing+=("$piece")
  done
  if ((${#missing[@]})); then
    waiting+=("$wheel: $((count[$wheel] - ${#missing[@]})) of ${count[$wheel]} pieces here; awaiting ${missing[*]}")
    continue
  fi
  # Join (a lone piece named as the wheel is the wheel itself) and check.
  joined=$staging/$wheel
  if [[ ${pieces[$wheel]} != "$wheel " ]]; then
    # shellcheck disable=SC2086  # the piece names: wheel names never hold spaces
    (cd "$staging" && cat ${pieces[$wheel]} > "$wheel.joining") && mv "$staging/$wheel.joining" "$joined"
  fi
  got=$(sha256sum "$joined" | cut -d' ' -f1)
  if [[ $got != "${sha[$wheel]}" ]]; then
    failed+=("$wheel: SHA-256 $got, expected ${sha[$wheel]} (pieces from another packing? fetch and carry the loads again)")
    rm -f "$joined"
    continue
  fi
  # pip --target replaces a top-level folder that exists already; a folder of its own per
  # wheel, merged afterwards, keeps what earlier wheels put there.
  unpacked=$staging/.unpacked
  rm -rf "$unpacked"
  if python3 -m pip install -q --no-deps --no-index --no-compile --no-cache-dir \
       --disable-pip-version-check --target "$unpacked" "$joined" > "$staging/pip.log" 2>&1 &&
     cp -a "$unpacked/." "$site/"; then
    echo "${sha[$wheel]}" > "$site/.wheel-loads/$wheel"
    installed_now+=("$wheel")
    rm -f "$joined"
    # shellcheck disable=SC2086
    (cd "$staging" && rm -f ${pieces[$wheel]})
  else
    failed+=("$wheel: pip install failed: $(tail -2 "$staging/pip.log" | tr '\n' ' ')")
  fi
  rm -rf "$unpacked"
done

# PYTHONPATH for this site: the folder and what its .pth files add. A .pth file may fail to load
# while the wheels it needs still wait for pieces; said only once nothing waits.
paths=$(python3 - "$site" 2> "$staging/pth.log" <<'EOF'
import site, sys
before = list(sys.path)
site.addsitedir(sys.argv[1])
print(":".join([sys.argv[1]] + [p for p in sys.path if p not in before and p != sys.argv[1]]))
EOF
) || paths=$site
if [[ -s $staging/pth.log && ${#waiting[@]} == 0 ]]; then
  echo "  a .pth file of $site did not load:"
  sed 's/^/    /' "$staging/pth.log"
fi
cat > "$site/env.sh" <<EOF
# Written by scripts/install_wheel_load.sh: puts the wheels installed in $site on PYTHONPATH.
export PYTHONPATH="$paths\${PYTHONPATH:+:\$PYTHONPATH}"
EOF

list() {  # title, items
  local title=$1; shift
  (($#)) || return 0
  echo "  $title ($#):"
  printf '    %s\n' "$@"
}
list "installed now" "${installed_now[@]}"
list "installed before" "${installed_before[@]}"
list "waiting for pieces" "${waiting[@]}"
list "FAILED" "${failed[@]}"
if ((${#earlier_missing[@]})); then
  echo "  pieces of earlier loads are not in $staging (${earlier_missing[*]}): was the machine" \
       "replaced since? Install from ${loads[0]} again."
fi
done_count=$((${#installed_now[@]} + ${#installed_before[@]}))
echo "install_wheel_load: $done_count of ${#wheels[@]} wheels installed in $site" \
     "(. $site/env.sh to use them)"
((${#failed[@]} == 0))
