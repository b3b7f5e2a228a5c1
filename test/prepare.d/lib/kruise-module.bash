# Shared by the prepare steps that read files of the github.com/openkruise/kruise module pinned by
# test/kruise-peer/go.mod (sourced, not run). Expects module_dir and a log function.

# Prints the module's directory in the Go module cache, downloading the module first when the cache lacks it.
# `go mod download -json` reports the directory whether or not the module was cached before, so a machine with
# an empty module cache gets the same answer as a warm one.
kruise_module_dir() {
  local json dir
  json="$(cd "$module_dir" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go mod download -json github.com/openkruise/kruise)" ||
    { log "go mod download github.com/openkruise/kruise failed"; return 1; }
  dir="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -1)"
  if [ -z "$dir" ] || [ ! -d "$dir/config/crd/bases" ]; then
    log "the Go module cache has no config/crd/bases for github.com/openkruise/kruise (go mod download said: $json)"
    return 1
  fi
  printf '%s\n' "$dir"
}
