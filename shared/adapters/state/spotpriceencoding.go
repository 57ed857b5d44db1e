package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// spotPriceEncoding names how the prices attribute is written, so a later format can be told apart.
const spotPriceEncoding = "gzip+json/v1"

// maxDecodedSpotPrices bounds what a stored blob may expand to (a full region is a few hundred KB of
// JSON), so a corrupt or hostile item cannot exhaust a function's memory.
const maxDecodedSpotPrices = 16 << 20

// encodeSpotPrices writes instance type → zone → price as gzip-compressed JSON. JSON keeps the format
// self-describing and its keys sorted, so equal tables encode to equal bytes; gzip takes the repeated
// zone names and digits down to a fraction.
func encodeSpotPrices(prices map[string]map[string]float64) ([]byte, error) {
	return encodeGzipJSON(prices)
}

// encodeGzipJSON writes v as gzip-compressed JSON (see encodeSpotPrices).
func encodeGzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeSpotPrices(blob []byte) (map[string]map[string]float64, error) {
	var prices map[string]map[string]float64
	if err := decodeGzipJSON(blob, &prices); err != nil {
		return nil, err
	}
	return prices, nil
}

// decodeGzipJSON reads what encodeGzipJSON wrote into v, refusing a blob that expands beyond
// maxDecodedSpotPrices.
func decodeGzipJSON(blob []byte, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return fmt.Errorf("prices: not gzip: %w", err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, maxDecodedSpotPrices+1))
	if err != nil {
		return fmt.Errorf("prices: decompressing: %w", err)
	}
	if len(raw) > maxDecodedSpotPrices {
		return errors.New("prices: expands beyond 16 MiB")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	return nil
}
