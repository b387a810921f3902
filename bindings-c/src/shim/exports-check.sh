#!/bin/sh
# exports-check.sh SO LIST — every symbol SO defines in its dynamic table matches a name or pattern of LIST
# (exports.list), or the check prints the others and fails: the build keeps what leaves the library to
# the list (exports.map cannot: its named fi_fabric versions rule out an anonymous node with `local: *`).
so=${1:?SO} list=${2:?LIST}
patterns=$(sed 's/#.*//' "$list" | tr -s ' \t' '\n\n' | grep -v '^$')
bad=
for name in $(objdump -T "$so" | awk '$2 ~ /^[gw]/ && $4 != "*UND*" && $4 != "*ABS*" { print $NF }' | sort -u); do
  ok=
  for p in $patterns; do
    # shellcheck disable=SC2254
    case "$name" in $p) ok=1; break ;; esac
  done
  [ -n "$ok" ] || bad="$bad $name"
done
if [ -n "$bad" ]; then
  echo "$so: exports names not in $list:$bad" >&2
  exit 1
fi
