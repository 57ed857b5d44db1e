package instance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ec2Wire is an EC2 endpoint that answers each query-protocol Action with a canned status and XML body,
// as EC2 does, so the SDK's own decoding and retry logic run on real wire shapes.
type ec2Wire struct {
	answers map[string][]wireAnswer // by Action; the last answer repeats
	calls   map[string]*atomic.Int32
	// tokens are the ClientTokens of the CreateFleet calls, in order (the SDK's retries included).
	mu     sync.Mutex
	tokens []string
}

type wireAnswer struct {
	status int
	body   string
}

func newEC2Wire(t *testing.T, answers map[string][]wireAnswer) (*ec2.Client, *ec2Wire) {
	t.Helper()
	w := &ec2Wire{answers: answers, calls: map[string]*atomic.Int32{}}
	for action := range answers {
		w.calls[action] = &atomic.Int32{}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		action := r.Form.Get("Action")
		if action == "CreateFleet" {
			w.mu.Lock()
			w.tokens = append(w.tokens, r.Form.Get("ClientToken"))
			w.mu.Unlock()
		}
		list, ok := w.answers[action]
		if !ok {
			rw.WriteHeader(http.StatusBadRequest)
			_, _ = rw.Write([]byte(errorXML("InvalidAction", "unexpected action "+action)))
			return
		}
		n := int(w.calls[action].Add(1)) - 1
		a := list[min(n, len(list)-1)]
		rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		rw.WriteHeader(a.status)
		_, _ = rw.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	client := ec2.New(ec2.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("a", "b", ""),
		RetryMaxAttempts: 3,
	})
	return client, w
}

func errorXML(code, message string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>` + code + `</Code><Message>` + message + `</Message></Error></Errors><RequestID>5f3b6c1e-0000-4000-8000-000000000000</RequestID></Response>`
}

const noInstances = `<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId><reservationSet/></DescribeInstancesResponse>`

// fleetXML is a CreateFleet answer with the given errorSet items and instance ids.
func fleetXML(errorItems, instanceIDs string) string {
	instances := ""
	if instanceIDs != "" {
		instances = `<item><launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>lt-1</launchTemplateName><version>$Latest</version></launchTemplateSpecification>
<overrides><instanceType>m5.large</instanceType><subnetId>subnet-b</subnetId><availabilityZone>us-east-1b</availabilityZone></overrides></launchTemplateAndOverrides>
<lifecycle>spot</lifecycle><instanceIds><item>` + instanceIDs + `</item></instanceIds><instanceType>m5.large</instanceType></item>`
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-2</requestId><fleetId>fleet-0123</fleetId>
<errorSet>` + errorItems + `</errorSet><fleetInstanceSet>` + instances + `</fleetInstanceSet></CreateFleetResponse>`
}

func fleetErrorItem(code, instanceType, subnet string) string {
	return `<item><launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>lt-1</launchTemplateName><version>$Latest</version></launchTemplateSpecification>
<overrides><instanceType>` + instanceType + `</instanceType><subnetId>` + subnet + `</subnetId></overrides></launchTemplateAndOverrides>
<lifecycle>spot</lifecycle><errorCode>` + code + `</errorCode><errorMessage>We currently do not have sufficient ` + instanceType + ` capacity.</errorMessage></item>`
}

func TestWireInsufficientAndUnfulfillableCapacity(t *testing.T) {
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet": {{200, fleetXML(fleetErrorItem("InsufficientInstanceCapacity", "c5.large", "subnet-a")+
			fleetErrorItem("UnfulfillableCapacity", "m5.large", "subnet-a"), "")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	var ice *InsufficientCapacityError
	require.ErrorAs(t, err, &ice)
	assert.ElementsMatch(t, []Offering{{"c5.large", "us-east-1a", "spot"}, {"m5.large", "us-east-1a", "spot"}}, ice.Offerings)
}

func TestWirePartialCapacityStillLaunches(t *testing.T) {
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{200, fleetXML(fleetErrorItem("InsufficientInstanceCapacity", "c5.large", "subnet-a"), "i-0abc")}},
	})
	inst, err := New(client, "demo").Launch(context.Background(), request())
	require.NoError(t, err)
	assert.Equal(t, "i-0abc", inst.ID)
	assert.Equal(t, []Offering{{"c5.large", "us-east-1a", "spot"}}, inst.NoCapacity, "the pool the fleet skipped is reported")
}

func TestWireThrottlingIsRetriedThenClassified(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{503, errorXML("RequestLimitExceeded", "Request limit exceeded.")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	assert.Equal(t, KindThrottled, KindOf(err))
	assert.EqualValues(t, 3, w.calls["CreateFleet"].Load(), "the SDK retries throttling with backoff before giving up")
}

func TestWireInvalidLaunchTemplate(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{400, errorXML("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name lt-1, does not exist.")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	assert.Equal(t, KindLaunchTemplateNotFound, KindOf(err))
	assert.Contains(t, err.Error(), "does not exist")
	assert.EqualValues(t, 1, w.calls["CreateFleet"].Load(), "a missing template is not retried blindly")
}

func TestWireQuotaAndUnauthorized(t *testing.T) {
	for code, kind := range map[string]ErrorKind{"InstanceLimitExceeded": KindQuota, "UnauthorizedOperation": KindUnauthorized} {
		t.Run(code, func(t *testing.T) {
			client, _ := newEC2Wire(t, map[string][]wireAnswer{
				"DescribeInstances": {{200, noInstances}},
				"CreateFleet":       {{400, errorXML(code, "no")}},
			})
			_, err := New(client, "demo").Launch(context.Background(), request())
			assert.Equal(t, kind, KindOf(err))
		})
	}
}

func TestWirePerOfferingRefusalNamesTheOffering(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{200, fleetXML(fleetErrorItem("InvalidParameterValue", "c5.large", "subnet-a"), "")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	var oe *OfferingsError
	require.ErrorAs(t, err, &oe)
	require.Len(t, oe.Rejected, 1)
	assert.Equal(t, RejectedOffering{Offering: Offering{"c5.large", "us-east-1a", "spot"}, Kind: KindInvalidRequest,
		Code: "InvalidParameterValue", Message: "We currently do not have sufficient c5.large capacity."}, oe.Rejected[0])
	assert.EqualValues(t, 1, w.calls["CreateFleet"].Load(), "an answer is not retried")
}

// TestWireServerErrorLeavesTheOutcomeOpen: a 500 after the SDK's retries may have launched the instance.
// The launcher looks for it by its claim tag, finds none, asks once more with the same ClientToken (EC2
// answers a repeated token with the first fleet), and when that fails too reports an unknown outcome, so
// the claim stays pending instead of being released and launched again.
func TestWireServerErrorLeavesTheOutcomeOpen(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{500, errorXML("InternalError", "An internal error has occurred.")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	assert.Equal(t, KindServerError, KindOf(err))
	assert.False(t, Answered(err), "a server error leaves open whether the fleet started the instance: %v", err)
	assert.EqualValues(t, 6, w.calls["CreateFleet"].Load(), "the SDK's three attempts, then three more with the same token")
	assert.EqualValues(t, 2, w.calls["DescribeInstances"].Load(), "the claim's instance is looked for before each call")
	assert.Equal(t, slices.Repeat([]string{"default-abc"}, 6), w.tokens, "every call carries the claim's token")
}

// TestWireServerErrorAdoptsWhatTheFleetStarted: the fleet launched the instance but its answer was a 500;
// the look-up by claim tag finds it, and no second fleet is asked for.
func TestWireServerErrorAdoptsWhatTheFleetStarted(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}, {200, taggedInstance("i-0started", "default-abc")}},
		"CreateFleet":       {{500, errorXML("InternalError", "An internal error has occurred.")}},
	})
	inst, err := New(client, "demo").Launch(context.Background(), request())
	require.NoError(t, err)
	assert.Equal(t, "i-0started", inst.ID)
	assert.EqualValues(t, 3, w.calls["CreateFleet"].Load(), "only the SDK's attempts: the instance was found")
}

// TestWireServerErrorThenAnAnswerOnTheSameToken: the second ask with the same token gets EC2's answer.
func TestWireServerErrorThenAnAnswerOnTheSameToken(t *testing.T) {
	server := wireAnswer{500, errorXML("InternalError", "An internal error has occurred.")}
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {server, server, server, {200, fleetXML("", "i-0abc")}},
	})
	inst, err := New(client, "demo").Launch(context.Background(), request())
	require.NoError(t, err)
	assert.Equal(t, "i-0abc", inst.ID)
	assert.Equal(t, slices.Repeat([]string{"default-abc"}, 4), w.tokens, "the same token: EC2 cannot launch twice")
}

// TestWireUnknownCodeLeavesTheOutcomeOpen: a code EC2 does not document as a refusal is no proof that
// nothing started, whatever its status.
func TestWireUnknownCodeLeavesTheOutcomeOpen(t *testing.T) {
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{400, errorXML("SomethingNew", "a code this launcher does not know")}},
	})
	_, err := New(client, "demo").Launch(context.Background(), request())
	assert.Equal(t, KindServerError, KindOf(err))
	assert.False(t, Answered(err))
}

// TestWireBatchServerErrorAdoptsWhatTheFleetStarted: a batch whose CreateFleet answered 500 after starting
// its instances adopts them by the batch tag and gives each claim one; none is launched again.
func TestWireBatchServerErrorAdoptsWhatTheFleetStarted(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, batchInstances("batch-b1", "i-02", "i-01")}},
		"CreateFleet":       {{500, errorXML("InternalError", "An internal error has occurred.")}},
		"CreateTags":        {{200, createTagsOK}},
	})
	res, err := New(client, "demo").LaunchBatch(context.Background(),
		BatchRequest{Request: fresh(request()), Batch: "batch-b1", Claims: []string{"c1", "c2", "c3"}})
	require.NoError(t, err)
	assert.True(t, res.Adopted)
	require.Len(t, res.Assigned, 2)
	assert.Equal(t, []Assignment{{Claim: "c1"}, {Claim: "c2"}}, []Assignment{{Claim: res.Assigned[0].Claim}, {Claim: res.Assigned[1].Claim}})
	assert.Equal(t, "i-01", res.Assigned[0].Instance.ID)
	assert.Equal(t, []string{"c3"}, res.Unassigned)
	require.Error(t, res.Partial)
	assert.False(t, Answered(res.Partial), "the third claim's instance may not be listed yet: its outcome is unknown")
	assert.EqualValues(t, 3, w.calls["CreateFleet"].Load(), "no fleet after the instances were found")
}

// TestWireBatchServerErrorLeavesTheOutcomeOpen: nothing found and the same token failing again leave the
// whole batch's outcome open.
func TestWireBatchServerErrorLeavesTheOutcomeOpen(t *testing.T) {
	client, w := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, noInstances}},
		"CreateFleet":       {{503, errorXML("Unavailable", "The service is unavailable.")}},
	})
	_, err := New(client, "demo").LaunchBatch(context.Background(),
		BatchRequest{Request: fresh(request()), Batch: "batch-b1", Claims: []string{"c1", "c2"}})
	assert.False(t, Answered(err), "%v", err)
	assert.Equal(t, slices.Repeat([]string{"batch-b1"}, 6), w.tokens)
}

const createTagsOK = `<?xml version="1.0" encoding="UTF-8"?>
<CreateTagsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-3</requestId><return>true</return></CreateTagsResponse>`

// instanceXML is one running instance of the cluster "demo" with the given extra tags.
func instanceXML(id string, tags map[string]string) string {
	items := `<item><key>` + TagCluster + `</key><value>demo</value></item>`
	for k, v := range tags {
		items += `<item><key>` + k + `</key><value>` + v + `</value></item>`
	}
	return `<item><instanceId>` + id + `</instanceId><instanceType>m5.large</instanceType><instanceState><code>0</code><name>pending</name></instanceState>
<placement><availabilityZone>us-east-1b</availabilityZone></placement><instanceLifecycle>spot</instanceLifecycle><tagSet>` + items + `</tagSet></item>`
}

func describeXML(instances string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId><reservationSet>
<item><reservationId>r-0123</reservationId><instancesSet>` + instances + `</instancesSet></item></reservationSet></DescribeInstancesResponse>`
}

func taggedInstance(id, claim string) string {
	return describeXML(instanceXML(id, map[string]string{TagNodeClaim: claim}))
}

func batchInstances(batch string, ids ...string) string {
	var items string
	for _, id := range ids {
		items += instanceXML(id, map[string]string{TagBatch: batch})
	}
	return describeXML(items)
}

// fresh is r on its first attempt, its token never sent (Request.Fresh).
func fresh(r Request) Request {
	r.Fresh = true
	return r
}
