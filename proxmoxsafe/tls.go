package proxmoxsafe

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// TLS for the connection to Proxmox: system roots by default, a CA bundle,
// a SHA-256 pin of the leaf certificate, or (loudly) no verification.

// buildTLS returns nil when the defaults (system roots, full verification)
// apply and no transport needs changing.
func buildTLS(cfg Config) (*tls.Config, error) {
	var pin []byte
	if cfg.Fingerprint != "" {
		h := strings.ReplaceAll(strings.TrimSpace(cfg.Fingerprint), ":", "")
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != sha256.Size {
			return nil, configError("Fingerprint", "Fingerprint must be a SHA-256 hex digest (64 hex digits, colons allowed)")
		}
		pin = b
	}
	if cfg.InsecureSkipVerify && (pin != nil || len(cfg.CACertPEM) > 0) {
		return nil, configError("InsecureSkipVerify", "InsecureSkipVerify cannot be combined with Fingerprint or CACertPEM")
	}
	var roots *x509.CertPool
	if len(cfg.CACertPEM) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(cfg.CACertPEM) {
			return nil, configError("CACertPEM", "CACertPEM holds no PEM certificate")
		}
	}
	if pin == nil && roots == nil && !cfg.InsecureSkipVerify {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	switch {
	case cfg.InsecureSkipVerify:
		t.InsecureSkipVerify = true
	case pin != nil:
		// Go verifies the chain only when InsecureSkipVerify is false, so we
		// take over verification: the pin always, the chain when a CA is set.
		t.InsecureSkipVerify = true
		t.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("proxmox server sent no certificate")
			}
			leaf := cs.PeerCertificates[0]
			sum := sha256.Sum256(leaf.Raw)
			if subtle.ConstantTimeCompare(sum[:], pin) != 1 {
				return fmt.Errorf("proxmox server certificate fingerprint %s does not match the configured pin", formatFingerprint(sum[:]))
			}
			if roots == nil {
				return nil
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: cs.ServerName})
			return err
		}
	}
	return t, nil
}

func formatFingerprint(sum []byte) string {
	h := strings.ToUpper(hex.EncodeToString(sum))
	parts := make([]string, 0, len(h)/2)
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}
