//go:build !floornovalidator

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"
)

// newValidator is configured as proxmoxsafe's (a copy: the floor must not
// link this project's packages): required structs, errors
// named by JSON field, one custom tag.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return f.Name
		}
		return name
	})
	if err := v.RegisterValidation("hexfp", func(fl validator.FieldLevel) bool {
		b, err := hex.DecodeString(strings.ReplaceAll(fl.Field().String(), ":", ""))
		return err == nil && len(b) == sha256.Size
	}); err != nil {
		panic(err)
	}
	return v
}
