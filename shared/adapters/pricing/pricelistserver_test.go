package pricing

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/stretchr/testify/require"
)

// getProductsPage is a GetProducts response body as the Price List API sends it: each price list
// document is a JSON object serialized into a string.
type getProductsPage struct {
	FormatVersion string   `json:"FormatVersion"`
	NextToken     string   `json:"NextToken,omitempty"`
	PriceList     []string `json:"PriceList"`
}

// getProductsRequest is the request body the client sends (awsJson1_1).
type getProductsRequest struct {
	ServiceCode   string
	FormatVersion string
	MaxResults    int
	NextToken     string
	Filters       []struct{ Type, Field, Value string }
}

// priceListServer speaks the Price List API's JSON 1.1 protocol on a loopback port: POST / with
// X-Amz-Target AWSPriceListService.GetProducts. It serves pages chained by NextToken, records the
// requests, and can answer ThrottlingException a number of times per page, fail a page for good, or
// hold a page until the client gives up.
type priceListServer struct {
	*httptest.Server
	pages map[string]getProductsPage // by the NextToken that asks for it; "" is the first page

	mu        sync.Mutex
	requests  []getProductsRequest
	auth      []string
	throttle  map[string]int    // NextToken → ThrottlingException answers left
	failWith  map[string]string // NextToken → error type answered every time, with HTTP 500 for InternalErrorException
	holdToken string            // a page never answered: the handler waits for the client to go away
}

func newPriceListServer(t *testing.T, pages []getProductsPage) *priceListServer {
	t.Helper()
	s := &priceListServer{pages: map[string]getProductsPage{}, throttle: map[string]int{}, failWith: map[string]string{}, holdToken: "\x00"}
	token := ""
	for i, p := range pages {
		s.pages[token] = p
		if p.NextToken == "" && i != len(pages)-1 {
			t.Fatalf("page %d has no NextToken but is not the last", i)
		}
		token = p.NextToken
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// recordedPages reads the hand-built pages under testdata/getproducts in file order.
func recordedPages(t *testing.T) []getProductsPage {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "getproducts", "page-*.json"))
	require.NoError(t, err)
	sort.Strings(files)
	require.NotEmpty(t, files)
	var pages []getProductsPage
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var p getProductsPage
		require.NoError(t, json.Unmarshal(raw, &p), f)
		pages = append(pages, p)
	}
	return pages
}

func (s *priceListServer) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Errortype", typ)
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"__type":%q,"message":%q}`, typ, msg)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		fail(http.StatusNotFound, "UnknownOperationException", r.Method+" "+r.URL.Path)
		return
	}
	if got := r.Header.Get("X-Amz-Target"); got != "AWSPriceListService.GetProducts" {
		fail(http.StatusBadRequest, "UnknownOperationException", "X-Amz-Target "+got)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		fail(http.StatusBadRequest, "SerializationException", "Content-Type "+ct)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req getProductsRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		fail(http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	throttled := s.throttle[req.NextToken] > 0
	if throttled {
		s.throttle[req.NextToken]--
	}
	failWith, hold := s.failWith[req.NextToken], req.NextToken == s.holdToken
	s.mu.Unlock()
	switch {
	case hold:
		<-r.Context().Done()
		return
	case throttled:
		fail(http.StatusBadRequest, "ThrottlingException", "Rate exceeded")
		return
	case failWith == "InternalErrorException":
		fail(http.StatusInternalServerError, failWith, "internal error")
		return
	case failWith != "":
		fail(http.StatusBadRequest, failWith, "refused")
		return
	}
	page, ok := s.pages[req.NextToken]
	if !ok {
		fail(http.StatusBadRequest, "InvalidNextTokenException", "unknown token "+req.NextToken)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(page)
}

func (s *priceListServer) recorded() ([]getProductsRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]getProductsRequest(nil), s.requests...), append([]string(nil), s.auth...)
}

// tokensAsked are the distinct NextTokens the client asked for, in the order first asked: one per page read.
func (s *priceListServer) tokensAsked() []string {
	reqs, _ := s.recorded()
	seen := map[string]bool{}
	var tokens []string
	for _, r := range reqs {
		if !seen[r.NextToken] {
			seen[r.NextToken] = true
			tokens = append(tokens, r.NextToken)
		}
	}
	return tokens
}

// asked counts the requests for the page token names.
func (s *priceListServer) asked(token string) int {
	reqs, _ := s.recorded()
	n := 0
	for _, r := range reqs {
		if r.NextToken == token {
			n++
		}
	}
	return n
}

// client is a real Pricing API client for prices in region, pointed at the server, with the production
// retryer but millisecond backoff.
func (s *priceListServer) client(region string) *awspricing.Client {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	fast := retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	return newAPIClient(cfg, fast, func(o *awspricing.Options) { o.BaseEndpoint = aws.String(s.URL) })
}

// syntheticPages prices every type of prices in the documented document format, size documents a page.
func syntheticPages(region string, prices map[string]float64, size int) []getProductsPage {
	names := sortedKeys(prices)
	var pages []getProductsPage
	for i := 0; i < len(names); i += size {
		p := getProductsPage{FormatVersion: "aws_v1"}
		for _, name := range names[i:min(i+size, len(names))] {
			p.PriceList = append(p.PriceList, priceDocument(region, name, fmt.Sprintf("%.10f", prices[name])))
		}
		if i+size < len(names) {
			p.NextToken = fmt.Sprintf("token-%d", len(pages)+1)
		}
		pages = append(pages, p)
	}
	return pages
}

// priceDocument is a Linux, shared-tenancy, on-demand Compute Instance document as the API sends it.
func priceDocument(region, instanceType, usd string) string {
	sku := strings.ToUpper(strings.NewReplacer(".", "", "-", "").Replace(instanceType)) + "SKU"
	return fmt.Sprintf(`{"product":{"productFamily":"Compute Instance","attributes":{"instanceType":%q,"regionCode":%q,`+
		`"operatingSystem":"Linux","tenancy":"Shared","capacitystatus":"Used","preInstalledSw":"NA","marketoption":"OnDemand",`+
		`"usagetype":"BoxUsage:%s","operation":"RunInstances"},"sku":%q},"serviceCode":"AmazonEC2","terms":{"OnDemand":{`+
		`"%[4]s.JRTCKXETXF":{"offerTermCode":"JRTCKXETXF","sku":%[4]q,"effectiveDate":"2026-11-01T00:00:00Z","priceDimensions":{`+
		`"%[4]s.JRTCKXETXF.6YS6EN2CT7":{"unit":"Hrs","beginRange":"0","endRange":"Inf","pricePerUnit":{"USD":%[5]q},`+
		`"description":"per On Demand Linux hour"}}}}},"version":"20261120225703","publicationDate":"2026-11-20T22:57:03Z"}`,
		instanceType, region, instanceType, sku, usd)
}
