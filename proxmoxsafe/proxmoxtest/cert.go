package proxmoxtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// identity is the server's TLS certificate in the forms tests ask for.
type identity struct {
	cert tls.Certificate
	leaf *x509.Certificate
	pem  []byte
}

func newIdentity() *identity {
	cert, leaf, pemBytes := newCertificate()
	return &identity{cert: cert, leaf: leaf, pem: pemBytes}
}

// newCertificate makes a fresh self-signed certificate for the loopback
// names, so every server has its own fingerprint (pinning tests can tell two
// servers apart). ECDSA P-256 keeps this fast.
func newCertificate() (tls.Certificate, *x509.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic("proxmoxtest: generating key: " + err.Error())
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic("proxmoxtest: generating serial: " + err.Error())
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"PVE Cluster Node (proxmoxtest fake)"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * 365 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: the client trusts it as its own root
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic("proxmoxtest: creating certificate: " + err.Error())
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic("proxmoxtest: parsing certificate: " + err.Error())
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf, pemBytes
}
