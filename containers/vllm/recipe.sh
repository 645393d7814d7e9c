# The recipe of the kit's own vLLM serving image: every step that decides its bytes, sourced (never run) by
# scripts/build-vllm-image.sh, which downloads, times, checks and records around it. This file's sha256 is one of
# the build inputs (with requirements-vllm-gpu.lock, packages.txt, debs.lock, the mirrors and SOURCE_DATE_EPOCH): change a
# line here and the image is rebuilt; change only the driver script and it is not.

# recipe_rootfs ROOT INCLUDE REPO SOURCES: Debian 12, Essential packages + apt (minbase) + INCLUDE, resolved against REPO
# alone (the flat repository of exactly the .debs of containers/vllm/debs.lock, scripts/lib/image-host.sh deb_layer);
# the image's apt sources are the file SOURCES (the mirror lines), not the build's repository
recipe_rootfs() {
    local root=$1 include=$2 repo=$3 sources=$4
    mmdebstrap --quiet --mode=root --variant=minbase --format=directory --include="$include" \
        --customize-hook="cat '$sources' > \"\$1/etc/apt/sources.list\"" bookworm "$root" "$repo"
}

# recipe_install ROOT WHEELS LOCK: /opt/vllm, a venv of Debian's python3, with exactly the lock's wheels (no index,
# no dependency resolution, every file's sha256 checked, no bytecode: Python writes it at first import), chrooted in
# a private mount namespace (its mounts vanish with it, whatever happens); then what a build leaves that is not
# content (caches, logs, the ld.so aux cache with its timestamps)
recipe_install() {
    local root=$1 wheels=$2 lock=$3
    mkdir -p "$root/mnt/wheels"
    cp "$lock" "$root/mnt/requirements.lock"
    unshare --mount --propagation private bash -euo pipefail -c '
        root=$1 wheels=$2
        mount -t proc proc "$root/proc"
        mount --bind "$wheels" "$root/mnt/wheels" && mount -o remount,bind,ro "$root/mnt/wheels"
        run() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
                    SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 "$@"; }
        run python3 -m venv /opt/vllm
        run /opt/vllm/bin/pip install --quiet --no-index --no-deps --require-hashes --no-compile \
            --find-links /mnt/wheels -r /mnt/requirements.lock
        run /opt/vllm/bin/pip check
    ' _ "$root" "$wheels"
    rm -rf "$root/mnt/wheels" "$root/mnt/requirements.lock" "$root/root/.cache" \
        "$root/var/cache/ldconfig/aux-cache" "$root/var/log"/* "$root/tmp"/*
    find "$root/opt/vllm" -name __pycache__ -type d -prune -exec rm -rf {} +
}

# recipe_tar ROOT: the root as a deterministic tar on stdout (sorted names, mtimes clamped to SOURCE_DATE_EPOCH,
# numeric owners, no atime/ctime)
recipe_tar() {
    tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime --numeric-owner --owner=0 --group=0 \
        --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime --format=posix -C "$1" -cf - .
}

# the image's configuration (docker import --change): the venv first on PATH, the NVIDIA runtime's driver
# capabilities, and upstream's entrypoint (`vllm serve`, so the kit's launcher passes the same flags to either image)
RECIPE_CONFIG=(
    --change 'ENV PATH=/opt/vllm/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    --change 'ENV VIRTUAL_ENV=/opt/vllm'
    --change 'ENV LANG=C.UTF-8'
    --change 'ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility'
    --change 'WORKDIR /root'
    --change 'ENTRYPOINT ["vllm", "serve"]'
)
