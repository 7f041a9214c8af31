package redact

import (
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// Secrets in shapes that no name rule sees, because the value is not
// after a secret's name: a command's short option glued to or after its
// flag, and a URL's userinfo (docs/SECURITY.md, "What redaction catches,
// and what it does not"). Each is looked for only in text holding its
// command's name or "://", which most text does not.
var (
	// mysqlPassword is the MySQL/MariaDB clients' "-pSECRET" (glued: "-p
	// x" asks for the password and x is a database) within one command
	// (up to a pipe, ";", "&" or the end of the line).
	mysqlPassword = lazyre.New(`(\b(?:mysql[a-z_-]*|mariadb[a-z_-]*)\b[^\n|;&]*?\s-p)('[^']*'|"[^"]*"|[^\s'"]+)`)
	// sshpassPassword is sshpass's "-p SECRET" and "-pSECRET".
	sshpassPassword = lazyre.New(`(\bsshpass\b[^\n|;&]*?\s-p\s*)('[^']*'|"[^"]*"|\S+)`)
	// curlUser is curl's "-u user:SECRET" and "--user user:SECRET".
	curlUser = lazyre.New(`(\bcurl\b[^\n|;&]*?\s(?:-u\s*|--user[=\s]+)['"]?[^\s:'"]*:)([^\s'"]+)`)
	// urlUserinfo is the password of a URL's userinfo,
	// "scheme://user:SECRET@host": up to the authority's last "@", so a
	// password holding "@" is redacted whole.
	urlUserinfo = lazyre.New(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s/?#@:]*:)([^\s/?#]*)@`)
)

// secretShapes redacts the values of mysqlPassword, sshpassPassword,
// curlUser and urlUserinfo in s.
func secretShapes(s string) string {
	if strings.Contains(s, "mysql") || strings.Contains(s, "mariadb") {
		s = mysqlPassword.ReplaceAllString(s, "${1}"+Value)
	}
	if strings.Contains(s, "sshpass") {
		s = sshpassPassword.ReplaceAllString(s, "${1}"+Value)
	}
	if strings.Contains(s, "curl") {
		s = curlUser.ReplaceAllString(s, "${1}"+Value)
	}
	if strings.Contains(s, "://") {
		s = urlUserinfo.ReplaceAllString(s, "${1}"+Value+"@")
	}
	return s
}
