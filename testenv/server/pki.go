package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiFiles are the paths of the certificates and keys kept in the data directory.
type pkiFiles struct {
	caCert, caKey         string
	servingCert, servKey  string
	saKey                 string
	clientCert, clientKey string
	caPEM                 []byte
}

// ensurePKI creates the CA, the serving certificate, the service-account key and the
// client-certificate identity once; later starts reuse them.
func ensurePKI(dir string) (*pkiFiles, error) {
	p := filepath.Join(dir, "pki")
	if err := os.MkdirAll(p, 0o700); err != nil {
		return nil, err
	}
	f := &pkiFiles{
		caCert: filepath.Join(p, "ca.crt"), caKey: filepath.Join(p, "ca.key"),
		servingCert: filepath.Join(p, "apiserver.crt"), servKey: filepath.Join(p, "apiserver.key"),
		saKey:      filepath.Join(p, "sa.key"),
		clientCert: filepath.Join(p, "cert-user.crt"), clientKey: filepath.Join(p, "cert-user.key"),
	}
	if !exists(f.caCert) {
		if err := createAll(f); err != nil {
			return nil, err
		}
	}
	pemBytes, err := os.ReadFile(f.caCert)
	if err != nil {
		return nil, err
	}
	f.caPEM = pemBytes
	return f, nil
}

func createAll(f *pkiFiles) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kclient-testenv-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}

	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		// Group system:masters: the certificate identity is an administrator, so tests can use
		// it for any request and compare with the token identities.
		Subject:     pkix.Name{CommonName: "kclient-cert-user", Organization: []string{"system:masters"}},
		NotBefore:   now,
		NotAfter:    now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := signLeaf(serving, ca, caKey, f.servingCert, f.servKey); err != nil {
		return err
	}
	if err := signLeaf(client, ca, caKey, f.clientCert, f.clientKey); err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(f.saKey, saKey); err != nil {
		return err
	}
	if err := writeKey(f.caKey, caKey); err != nil {
		return err
	}
	// The CA certificate is written last: its presence marks the directory as complete.
	return writePEM(f.caCert, "CERTIFICATE", caDER)
}

func signLeaf(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing %s: %w", tmpl.Subject.CommonName, err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
