#!/bin/sh
# The image's entrypoint. A host folder bind-mounted at /data keeps its host owner (often
# root), which this unprivileged user cannot write; parla would then stop on its first mkdir
# with no hint of the fix. Say the fix instead, then run parla with the given arguments.
set -eu
dir="${DATA_DIR:-/data}"
if [ "$#" -eq 0 ] && ! { [ -d "$dir" ] && [ -w "$dir" ] && [ -x "$dir" ]; }; then
  echo "parla: $dir is not writable by this container's user (uid $(id -u), gid $(id -g))." >&2
  echo "parla: on the host, give the folder mounted at $dir to that user:  chown -R $(id -u):$(id -g) <host folder>" >&2
  echo "parla: (or use a named volume, which the image initialises with the right owner)" >&2
  exit 78
fi
exec /usr/local/bin/parla "$@"
