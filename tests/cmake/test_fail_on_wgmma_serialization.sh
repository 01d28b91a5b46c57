#!/bin/bash
# The CUDA compiler launcher cmake/fail_on_wgmma_serialization.sh against fake compilers: it
# must fail a compile whose ptxas reports serialised wgmma (C7510, C7511) or an injected wait
# or arrive (C7517, C7519) and remove its
# object, pass clean compiles and their messages through, and keep a compiler's own failure.
set -u
launcher=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() {  # name, expected rc, actual rc
  if [[ $2 != "$3" ]]; then echo "FAIL: $1: rc $3, expected $2"; fails=$((fails + 1)); else echo "ok: $1"; fi
}
# A fake nvcc: writes the object after -o, prints $MSG on stderr, exits $RC.
cat > "$work/fake_nvcc" <<'FAKE'
#!/bin/bash
prev=""
for a in "$@"; do [[ $prev == "-o" ]] && echo obj > "$a"; prev=$a; done
[[ -n ${MSG:-} ]] && echo "$MSG" >&2
exit "${RC:-0}"
FAKE
chmod +x "$work/fake_nvcc"

MSG="ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function 'k'" \
  "$launcher" "$work/fake_nvcc" -c a.cu -o "$work/a.o" 2>"$work/err"; rc=$?
check "C7511 fails the compile" 1 $rc
[[ ! -e $work/a.o ]] || { echo "FAIL: the object of a serialised compile was kept"; fails=$((fails + 1)); }
grep -q "(C7511)" "$work/err" || { echo "FAIL: ptxas's message was not passed on"; fails=$((fails + 1)); }
grep -q "GDN_FAIL_ON_WGMMA_SERIALIZATION=OFF" "$work/err" || { echo "FAIL: no hint how to build anyway"; fails=$((fails + 1)); }

MSG="ptxas info    : (C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls" \
  "$launcher" "$work/fake_nvcc" -c b.cu -o "$work/b.o" 2>/dev/null; rc=$?
check "C7510 fails the compile" 1 $rc

MSG="ptxas info    : (C7517) warpgroup.wait is injected in around line 4143 by compiler to allow use of registers defined by GMMA in function 'k'" \
  "$launcher" "$work/fake_nvcc" -c e.cu -o "$work/e.o" 2>/dev/null; rc=$?
check "C7517 fails the compile" 1 $rc
[[ ! -e $work/e.o ]] || { echo "FAIL: the object of a compile with an injected wait was kept"; fails=$((fails + 1)); }

MSG="ptxas info    : (C7519) warpgroup.arrive is injected in around line 2533 by compiler to allow use of registers in GMMA in function 'k'" \
  "$launcher" "$work/fake_nvcc" -c f.cu -o "$work/f.o" 2>/dev/null; rc=$?
check "C7519 fails the compile" 1 $rc

MSG="ptxas info    : (C7512) something not about wgmma" "$launcher" "$work/fake_nvcc" -c g.cu -o "$work/g.o" 2>/dev/null; rc=$?
check "another C75xx message passes" 0 $rc

MSG="ptxas info    : Used 128 registers" "$launcher" "$work/fake_nvcc" -c c.cu -o "$work/c.o" 2>"$work/err"; rc=$?
check "a clean compile passes" 0 $rc
[[ -e $work/c.o ]] || { echo "FAIL: the object of a clean compile was removed"; fails=$((fails + 1)); }
grep -q "Used 128 registers" "$work/err" || { echo "FAIL: a clean compile's messages were dropped"; fails=$((fails + 1)); }

RC=2 MSG="error: something else" "$launcher" "$work/fake_nvcc" -c d.cu -o "$work/d.o" 2>/dev/null; rc=$?
check "a failing compile keeps its exit status" 2 $rc

echo "$fails failure(s)"
[[ $fails == 0 ]]
