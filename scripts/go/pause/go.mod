module ts-operator-sdk.local/scripts/go/pause

go 1.26.0
