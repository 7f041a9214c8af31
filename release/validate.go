package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"
)

// validateServerJSON checks a server.json against the registry schema the
// release directory carries (release/testdata/server.schema.json).
func validateServerJSON(root, path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return validateServerDoc(root, doc)
}

func validateServerDoc(root string, doc []byte) error {
	raw, err := os.ReadFile(filepath.Join(root, "release", "testdata", "server.schema.json"))
	if err != nil {
		return err
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("registry schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("server.json: %w", err)
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("server.json does not match the registry schema: %w", err)
	}
	return nil
}
