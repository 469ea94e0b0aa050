#!/usr/bin/env bash
# Regenerates test/fixtures/bundles/olm-verdicts.json: operator-framework/api
# v0.34's verdict (as operator-sdk's `bundle validate` assembles it) on every
# bundle variant of test/unit/broken-bundles.ts. bundle-verdicts.test.ts
# compares our `bundle validate` with that file. Only this repo's CI needs Go;
# the reference binary is cached outside the repo.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cache_root="${TS_OPERATOR_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ts-operator-sdk}"
api_version="$(sed -n 's#^require github.com/operator-framework/api \(v[^ ]*\)$#\1#p; s#^\tgithub.com/operator-framework/api \(v[^ ]*\)$#\1#p' "$here/go/olm-validate/go.mod" | head -1)"
tool="$cache_root/tools/olm-validate-api-$api_version-$(sha256sum "$here/go/olm-validate/main.go" | cut -c1-12)"
golden="$repo/test/fixtures/bundles/olm-verdicts.json"

if [[ ! -x "$tool" ]]; then
  command -v go >/dev/null || { echo "olm-verdicts: Go is needed to build the operator-framework/api reference (only for this repo's tests)" >&2; exit 1; }
  mkdir -p "$(dirname "$tool")"
  echo "olm-verdicts: building the operator-framework/api $api_version reference" >&2
  (cd "$here/go/olm-validate" && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -o "$tool.tmp" . && mv "$tool.tmp" "$tool")
fi

(cd "$repo" && npm run --silent build)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
node "$repo/dist/test/unit/broken-bundles.js" "$work" > "$work/index.jsonl"

{
  echo '{'
  printf '  "reference": "github.com/operator-framework/api %s (DefaultBundleValidators + operator-sdk object checks + selected optional validators)",\n' "$api_version"
  echo '  "verdicts": {'
  first=1
  while IFS= read -r line; do
    name="$(jq -r .name <<<"$line")"
    selector="$(jq -r .selector <<<"$line")"
    values="$(jq -r .optionalValues <<<"$line")"
    verdict="$("$tool" --select-optional "$selector" --optional-values "$values" "$work/$name")"
    [[ $first == 1 ]] || echo ','
    first=0
    printf '    %s: %s' "$(jq -Rn --arg n "$name" '$n')" "$(jq -c --arg s "$selector" --arg v "$values" '{selector: $s, optionalValues: $v} + .' <<<"$verdict")"
  done < "$work/index.jsonl"
  echo
  echo '  }'
  echo '}'
} | jq --indent 2 'walk(if type == "string" then gsub("0x[0-9a-f]{6,}"; "0x…") else . end)' > "$golden.tmp"
# (The gsub above: a k8s field error that dumps a CRD's versions prints the
# addresses of their schema pointers, different on every run.)
mv "$golden.tmp" "$golden"
echo "olm-verdicts: wrote $(jq '.verdicts | length' "$golden") verdicts to ${golden#"$repo/"}" >&2
