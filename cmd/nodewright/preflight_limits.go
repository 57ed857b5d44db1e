package main

// What preflight holds a deployment against: facts about AWS and about this repository that no API
// reports. Each says where it comes from.

// functionURLUnavailable are the regions where Lambda offers no Function URLs, as the AWS Lambda
// Developer Guide lists them ("Creating and managing Lambda function URLs", read November 2026). A
// documented list rather than a probe: probing would mean creating a function and a URL in the account.
var functionURLUnavailable = map[string]bool{
	"ap-south-2":     true, // Asia Pacific (Hyderabad)
	"ap-southeast-4": true, // Asia Pacific (Melbourne)
	"ap-southeast-5": true, // Asia Pacific (Malaysia)
	"ap-southeast-6": true, // Asia Pacific (New Zealand)
	"ap-southeast-7": true, // Asia Pacific (Thailand)
	"ap-east-2":      true, // Asia Pacific (Taipei)
	"ca-west-1":      true, // Canada West (Calgary)
	"eu-south-2":     true, // Europe (Spain)
	"eu-central-2":   true, // Europe (Zurich)
	"il-central-1":   true, // Israel (Tel Aviv)
	"me-central-1":   true, // Middle East (UAE)
}

// The Kubernetes minors Nodewright supports. Below oldestKubernetes the webhook registration's
// matchConditions (shared/adapters/footprint/webhook.go) are not generally available (GA in 1.30). From
// 1.31 a warm read's one-item consistent list is served from the watch cache (DESIGN decision 6,
// shared/adapters/kube/viewread.go); on 1.30 it reads etcd each time. newestTestedKubernetes is the client-go and
// sandbox control plane the repository is built and tested with (go.mod k8s.io/client-go v0.34, make
// kube-bin 1.34).
const (
	oldestKubernetesMinor       = 30
	watchCacheReadsMinor        = 31
	newestTestedKubernetesMinor = 34
)

// The stack's reserved concurrency (infra/concurrency.go, infra/webhook.go): the five workers always,
// the webhook when it is deployed. TestPreflightReservedConcurrencyMatchesInfra keeps these in step.
const (
	workersReservedConcurrency = 3 /* provisioner */ + 3 /* disruption */ + 2 /* lifecycle */ + 10 /* interruption */ + 10 /* termination */
	webhookReservedConcurrency = 100
	// lambdaUnreservedMinimum is what Lambda keeps unreserved in every account: a reservation that would
	// leave less is refused.
	lambdaUnreservedMinimum = 100
)
