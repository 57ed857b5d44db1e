package footprint

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// CheckCABundle checks that data is what the API server needs in a webhook's caBundle: PEM holding
// one or more CERTIFICATE blocks that parse as X.509 certificates and no other block (text between
// blocks, such as openssl's subject lines, is ignored, as PEM readers do). The API server
// stores any bytes it is given and only fails when it calls the webhook, so a wrong file would
// silently turn the webhook off (failurePolicy Ignore). A private key in the file is refused too: it
// would be published in the cluster's configuration.
func CheckCABundle(data []byte) error {
	rest := data
	certs := 0
	for i := 1; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("PEM block %d is of type %s, want CERTIFICATE blocks only", i, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("PEM block %d is not an X.509 certificate: %w", i, err)
		}
		certs++
	}
	if certs == 0 {
		return errors.New("no PEM CERTIFICATE block found: want the CA certificate in PEM (-----BEGIN CERTIFICATE-----)")
	}
	return nil
}
