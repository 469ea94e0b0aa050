module ts-operator-sdk.local/ci/tools/pause

go 1.26.0
