# Shared by the ci/install-*.sh scripts (sourced, not run).
#   apt_install PKG...   installs Debian packages (with sudo when not root)
#   pip_install SPEC...  installs Python packages wherever this Python allows it: a virtualenv or
#                        pyenv takes a plain install; a Debian/Ubuntu system Python refuses one
#                        (PEP 668, "externally managed") and gets a --user install instead.
# ~/.local/bin (where --user puts console scripts such as kubectl) is added to PATH.
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export PATH="$HOME/.local/bin:$PATH"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "apt-get is not available: install $* by hand" >&2; return 1; }
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pip_install() {
  local opts=(--quiet --disable-pip-version-check)
  python3 -m pip install "${opts[@]}" "$@" 2>/dev/null ||
    python3 -m pip install "${opts[@]}" --user "$@" 2>/dev/null ||
    python3 -m pip install "${opts[@]}" --user --break-system-packages "$@"
}
