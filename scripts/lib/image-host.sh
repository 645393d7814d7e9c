# Sourced by the offline image builds (scripts/build-executor-image.sh, scripts/build-vllm-image.sh), never run: what
# a host needs to build an image with mmdebstrap and docker import. The sourcing script defines `die` first.

DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

require_image_host() {  # require_image_host: root, mmdebstrap, Debian's keyring, a docker that answers
    [ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap root mode, chroot)"
    command -v mmdebstrap >/dev/null || die "mmdebstrap missing: run scripts/install-host.sh (make host) first"
    # Debian's archive keys, named explicitly: on an Ubuntu host apt's own keyring has only Ubuntu's (the rootfs
    # keeps no apt state, so the bytes are the same either way).
    [ -f "$DEBIAN_KEYRING" ] || die "$DEBIAN_KEYRING missing: apt-get install debian-archive-keyring (make host does)"
    command -v docker >/dev/null || die "docker CLI missing: run scripts/install-host.sh (make host) first"
    docker info >/dev/null 2>&1 || die "dockerd not answering 'docker info': run scripts/install-host.sh (make host) first"
}
