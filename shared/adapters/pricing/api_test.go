package pricing

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedEUWest1 is what the hand-built pages under testdata/getproducts price: every Linux,
// shared-tenancy BoxUsage document with a positive hourly USD price, and nothing else.
var recordedEUWest1 = map[string]float64{"m5.large": 0.107, "c5.large": 0.096, "m7g.large": 0.0912, "r5.large": 0.141,
	"t3.micro": 0.0114, "c6g.large": 0.073}

func TestAPISourceReadsTheRecordedPages(t *testing.T) {
	srv := newPriceListServer(t, recordedPages(t))
	prices, stats, err := APISource{API: srv.client("eu-west-1")}.read(context.Background(), "eu-west-1")
	require.NoError(t, err)
	assert.Equal(t, recordedEUWest1, prices)
	assert.Equal(t, 3, stats.Pages, "NextToken followed to the last page")
	assert.Equal(t, 18, stats.Documents)
	assert.Equal(t, map[string]int{
		"operating system not Linux":   1,
		"tenancy not Shared":           1,
		"malformed document":           2, // a truncated object and a JSON array
		"capacity status not Used":     2, // unused and allocated capacity reservations
		"pre-installed software":       1,
		"usage type not BoxUsage":      1, // a dedicated host's HostBoxUsage
		"no positive hourly USD price": 3, // a zero price, a non-hourly unit, a price in CNY only
		"another region":               1,
	}, stats.Skipped)

	reqs, auth := srv.recorded()
	// Pages, not requests: the SDK may send a page's request again after a transport error.
	assert.Equal(t, []string{"", "eyJwYWdlIjoyfQ==", "eyJwYWdlIjozfQ=="}, srv.tokensAsked())
	filters := map[string]string{}
	for _, f := range reqs[0].Filters {
		assert.Equal(t, "TERM_MATCH", f.Type)
		filters[f.Field] = f.Value
	}
	assert.Equal(t, map[string]string{"regionCode": "eu-west-1", "operatingSystem": "Linux", "preInstalledSw": "NA",
		"tenancy": "Shared", "capacitystatus": "Used", "marketoption": "OnDemand", "productFamily": "Compute Instance"}, filters)
	assert.Equal(t, "AmazonEC2", reqs[0].ServiceCode)
	assert.Equal(t, "aws_v1", reqs[0].FormatVersion)
	assert.Equal(t, 100, reqs[0].MaxResults, "the largest page the API serves")
	assert.Contains(t, auth[0], "/eu-central-1/pricing/aws4_request", "eu-west-1's prices are asked of the eu-central-1 endpoint")
}

func TestAPISourceRetriesThrottling(t *testing.T) {
	srv := newPriceListServer(t, recordedPages(t))
	srv.throttle["eyJwYWdlIjoyfQ=="] = 3
	prices, err := APISource{API: srv.client("eu-west-1")}.OnDemandPrices(context.Background(), "eu-west-1")
	require.NoError(t, err, "the SDK's retryer rides out ThrottlingException")
	assert.Equal(t, recordedEUWest1, prices)
	assert.Equal(t, 4, srv.asked("eyJwYWdlIjoyfQ=="), "page 2 asked four times")
}

func TestAPISourceFailsWholeOnAFailedPage(t *testing.T) {
	for name, tc := range map[string]struct {
		errType  string
		attempts int
	}{
		"internal error, retried": {"InternalErrorException", APIMaxAttempts},
		"access denied, final":    {"AccessDeniedException", 1},
		"throttled for good":      {"ThrottlingException", APIMaxAttempts},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newPriceListServer(t, recordedPages(t))
			srv.failWith["eyJwYWdlIjoyfQ=="] = tc.errType
			prices, err := APISource{API: srv.client("eu-west-1")}.OnDemandPrices(context.Background(), "eu-west-1")
			require.Error(t, err)
			assert.Nil(t, prices, "no partial table")
			var apiErr smithy.APIError
			require.True(t, errors.As(err, &apiErr), err.Error())
			assert.Equal(t, tc.errType, apiErr.ErrorCode())
			assert.Contains(t, err.Error(), "reading the price list for eu-west-1 (page 2)")
			assert.Equal(t, tc.attempts, srv.asked("eyJwYWdlIjoyfQ=="))

			p, err := NewProvider("eu-west-1")
			require.NoError(t, err)
			before := p.OnDemandSourceInfo()
			require.Error(t, p.RefreshOnDemand(context.Background(), APISource{API: srv.client("eu-west-1")}, time.Now()))
			assert.Equal(t, before, p.OnDemandSourceInfo(), "a failed read keeps the shipped prices")
			v, _ := p.OnDemand("m5.large")
			assert.InDelta(t, 0.107, v, 1e-9)
		})
	}
}

func TestAPISourceStopsAtTheDeadline(t *testing.T) {
	srv := newPriceListServer(t, recordedPages(t))
	srv.holdToken = "eyJwYWdlIjozfQ=="
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := APISource{API: srv.client("eu-west-1")}.OnDemandPrices(ctx, "eu-west-1")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "the context bounds the read, retries included")
}

func TestReadPriceListItemUsageTypes(t *testing.T) {
	for usage, ok := range map[string]bool{
		"BoxUsage:m5.large": true, "EUW1-BoxUsage:m5.large": true, "USE2-BoxUsage:c7i-flex.large": true,
		"EUW1-DedicatedUsage:m5.large": false, "EUW1-HostBoxUsage:m5.metal": false, "EUW1-UnusedBox:m5.large": false, "": false,
	} {
		assert.Equal(t, ok, isBoxUsage(usage), usage)
	}
	doc := strings.Replace(priceDocument("us-east-1", "m5.large", "0.096"), `"usagetype":"BoxUsage:m5.large"`, `"usagetype":"Reservation:m5.large"`, 1)
	_, _, skip := ReadPriceListItem(doc, "us-east-1")
	assert.Equal(t, "usage type not BoxUsage", skip)
	name, price, skip := ReadPriceListItem(priceDocument("us-east-1", "m5.large", "0.0960000000"), "us-east-1")
	assert.Equal(t, "", skip)
	assert.Equal(t, "m5.large", name)
	assert.InDelta(t, 0.096, price, 1e-12)
}

func TestEndpointRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2": "us-east-1", "eu-west-1": "eu-central-1", "ap-northeast-1": "ap-south-1", "sa-east-1": "us-east-1",
		"me-south-1": "eu-central-1", "il-central-1": "eu-central-1", "af-south-1": "eu-central-1", "ca-west-1": "us-east-1",
		"mx-central-1": "us-east-1",
	} {
		assert.Equal(t, want, EndpointRegion(region), region)
	}
}
