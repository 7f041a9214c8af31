package redact

import "testing"

// TestSecretShapes: secrets that follow no secret's name — a MySQL or
// MariaDB client's glued -p, sshpass's -p, curl's -u user:X and a URL's
// userinfo — are redacted in free text (task log lines, gateway strings),
// and what only resembles them is left alone.
func TestSecretShapes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"mysqldump -u root -pS3cr3t db > /tmp/x.sql":    "mysqldump -u root -p[redacted] db > /tmp/x.sql",
		"mysql -h db1 -p'two words' -e 'select 1'":      "mysql -h db1 -p[redacted] -e 'select 1'",
		`mariadb-dump --user=x -p"q x" all`:             `mariadb-dump --user=x -p[redacted] all`,
		"sshpass -p hunter2 ssh root@pve2 uptime":       "sshpass -p [redacted] ssh root@pve2 uptime",
		"sshpass -v -phunter2 scp a b":                  "sshpass -v -p[redacted] scp a b",
		"curl -u admin:hunter2 https://x/":              "curl -u admin:[redacted] https://x/",
		"curl -s --user 'admin:hunter2' https://x/":     "curl -s --user 'admin:[redacted]' https://x/",
		"pull from https://user:hunter2@git.example/r":  "pull from https://user:[redacted]@git.example/r",
		"smb://backup:p@ss@nas/share failed":            "smb://backup:[redacted]@nas/share failed",
		"FTP://u:x@h":                                   "FTP://u:[redacted]@h",
		"mysql -p":                                      "mysql -p",
		"mysql -P 3306 --port 3306 db":                  "mysql -P 3306 --port 3306 db",
		"echo -pfoo; mysql db":                          "echo -pfoo; mysql db",
		"mysql db | grep -pattern":                      "mysql db | grep -pattern",
		"https://pve1:8006/api2/json/nodes":             "https://pve1:8006/api2/json/nodes",
		"mail to user@example.com via smtp://relay:25/": "mail to user@example.com via smtp://relay:25/",
		"https://user@host/ (no password)":              "https://user@host/ (no password)",
		"scp -P 22 -p file host:":                       "scp -P 22 -p file host:",
	} {
		if got := SecretArgs(in); got != want {
			t.Errorf("SecretArgs(%q)\n got  %q\n want %q", in, got, want)
		}
	}
}
