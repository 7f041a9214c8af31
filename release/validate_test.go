package main

import (
	"strings"
	"testing"
)

func TestSchemaRefusesABrokenServerJSON(t *testing.T) {
	t.Parallel()
	// The check must be able to fail: a name the registry refuses.
	err := validateServerDoc("..", []byte(`{"name":"not a name","description":"d","version":"0.1.0"}`))
	if err == nil || !strings.Contains(err.Error(), "name") {
		t.Fatalf("broken server.json: %v", err)
	}
}
