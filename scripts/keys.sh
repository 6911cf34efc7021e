#!/usr/bin/env bash
# Create the local secret keys once: .local/secret_key (Django's SECRET_KEY), .local/pseudonym_key
# (export pseudonyms) and .local/handle_key (the handles that name rows to annotators), random, readable by their owner only (mode 600).
# An existing file is never replaced: rotating a key is a deliberate act (delete the file, or set
# DJANGO_SECRET_KEY / PSEUDONYM_KEY / HANDLE_KEY). annotator/settings.py reads these files when the
# variables are unset; DJANGO_SECRET_KEY_FILE, PSEUDONYM_KEY_FILE and HANDLE_KEY_FILE name other files.
set -euo pipefail
cd "$(dirname "$0")/.."

make_key() {
  local file="$1"
  [ -s "$file" ] && return 0
  mkdir -p "$(dirname "$file")"
  # umask in a subshell: the file is never readable by others, not even for a moment.
  (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n=+/' > "$file.tmp" && mv "$file.tmp" "$file")
  echo "keys: created $file"
}

make_key "${DJANGO_SECRET_KEY_FILE:-.local/secret_key}"
make_key "${PSEUDONYM_KEY_FILE:-.local/pseudonym_key}"
make_key "${HANDLE_KEY_FILE:-.local/handle_key}"
