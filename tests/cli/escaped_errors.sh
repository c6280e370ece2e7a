#!/bin/bash
# A message quoting a control character from an option or a file reaches the terminal escaped: ESC [2J would
# clear the screen of whoever runs the lab on a shared file.
binary=$1 scenario=$2
err=$("$binary" trace "$scenario" --mask $'x\e[2J' 2>&1 >/dev/null)
code=$?
[ "$code" = 2 ] || { echo "exit $code, expected 2: $err"; exit 1; }
case "$err" in
  *$'\e'*) echo "a raw ESC reached the terminal: $(printf '%s' "$err" | od -c | head -3)"; exit 1 ;;
esac
[[ "$err" == *"'x\\x1b[2J'"* ]] || { echo "the value is not shown escaped: $err"; exit 1; }
echo "messages: control characters escaped"
