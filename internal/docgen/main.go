// Command docgen writes docs/TOOLS.md and the tool table of README.md
// (between the <!-- TOOLS-START --> and <!-- TOOLS-END --> markers) from
// mcpserver.Tools, the one list of tools, and the settings reference of
// docs/CONFIGURATION.md (between <!-- SETTINGS-START --> and
// <!-- SETTINGS-END -->, and <!-- HTTP-SETTINGS-START --> and
// <!-- HTTP-SETTINGS-END -->) from internal/settings, the table behind the
// binary's flags, variables and --help. Run it from the module:
//
//	go run ./internal/docgen
//
// README.md and docs/CONFIGURATION.md are left alone when they do not
// exist; when one exists without its markers docgen fails. A test fails
// when the files drift from what docgen would write.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", "", "module root (default: the directory holding go.mod, searched upwards from the working directory)")
	flag.Parse()
	if err := run(*root, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(root string, log io.Writer) error {
	if root == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			return err
		}
	}
	outs, genErr := generate(root)
	for _, o := range outs {
		path := filepath.Join(root, o.path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, o.content, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(log, "docgen: wrote", o.path)
	}
	if genErr != nil {
		return genErr
	}
	if len(outs) == 1 {
		fmt.Fprintln(log, "docgen: no README.md, tool table not written")
	}
	return nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod found above the working directory; run from the module or pass -root")
		}
		dir = parent
	}
}
