# Sourced by the window tests that type: press KEYS... and release them in reverse, a few frames later (a chord such as
# ctrl a held while the window's frames see it, as a person's fingers are).
press() {
  local keys=("$@")
  for key in "${keys[@]}"; do xdotool keydown "$key"; sleep 0.2; done
  sleep 0.4
  for ((i = ${#keys[@]} - 1; i >= 0; i--)); do xdotool keyup "${keys[i]}"; sleep 0.2; done
  sleep 0.2
}
