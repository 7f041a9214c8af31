package mcpserver

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// secretFieldName matches an input field name that suggests a secret.
var secretFieldName = regexp.MustCompile(`(?i)pass|secret|token|key|ticket|credential`)

// openMapFields are the input fields whose keys the caller chooses, with
// the check that keeps secrets out of them: a secret there would reach the
// arguments digest (proxmoxsafe.ArgumentsDigest), which grant files store
// unkeyed.
var openMapFields = map[string]string{
	"api_get.params":          "read query: not approved, not audited, no digest",
	"api_request.params":      "checkGatewaySecrets refuses every parameter the gateway would redact",
	"guest_config_set.set":    "only settable config keys, none a secret (NeverConfigKey)",
	"guest_config_set.delete": "key names, not values",
}

// TestToolInputsHoldNoSecret guards the reason the arguments digest and
// the approval phrases are unkeyed (docs/SECURITY.md, "Digests"): no tool
// input holds a secret. A field whose name suggests one fails, and so does
// a map or list of strings whose keys the caller chooses, unless it is
// listed in openMapFields with the check that keeps secrets out. This is a
// guard for future fields, not a reproduction: it passed before the
// gateway refused secret parameters.
func TestToolInputsHoldNoSecret(t *testing.T) {
	t.Parallel()
	publicKeys := map[string]bool{"ssh_public_keys": true} // public keys, by validation (pve_sshkeys)
	seen := map[string]bool{}
	for _, td := range allTools() {
		var walk func(typ reflect.Type, at string)
		walk = func(typ reflect.Type, at string) {
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct {
				return
			}
			for f := range typ.Fields() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" || !f.IsExported() {
					continue
				}
				if f.Anonymous && name == "" {
					walk(f.Type, at)
					continue
				}
				if name == "" {
					name = f.Name
				}
				path := at + "." + name
				if secretFieldName.MatchString(name) && !publicKeys[name] {
					t.Errorf("%s: the input field name suggests a secret", path)
				}
				switch k := f.Type.Kind(); {
				case k == reflect.Map, k == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
					seen[path] = true
					if _, ok := openMapFields[path]; !ok {
						t.Errorf("%s: the caller chooses its entries; list it in openMapFields with the check that keeps secrets out", path)
					}
				case k == reflect.Struct, k == reflect.Pointer:
					walk(f.Type, path)
				}
			}
		}
		walk(td.input, td.info.Name)
	}
	for path := range openMapFields {
		if !seen[path] {
			t.Errorf("openMapFields lists %s, which no tool input has", path)
		}
	}
}
