#!/usr/bin/env bash
# System packages the test suite drives for real (not mocks): SoftHSM2 for
# PKCS#11 capture keys, the openssl CLI for a local RFC 3161 authority.
# Installs only what is missing; needs root (or sudo) the first time.
set -euo pipefail

need=()
[ -e /usr/lib/softhsm/libsofthsm2.so ] || need+=(softhsm2)
command -v softhsm2-util >/dev/null 2>&1 || need+=(softhsm2)
command -v openssl >/dev/null 2>&1 || need+=(openssl)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing system packages: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
