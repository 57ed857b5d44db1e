// Package kube is the Kubernetes adapter: everything Nodewright's functions do against a cluster's API
// server goes through it, and nothing outside it imports client-go.
//
// It is an adapter (the outer ring): it may use client-go, k8s.io/api and the AWS SDK's STS client, and it
// returns plain k8s.io/api types and the domain errors of errors.go, so the pure core never sees a client.
//
// What it provides and the contracts each part keeps:
//
//   - Authentication (token.go, restconfig.go): EKS IAM bearer tokens, a presigned STS
//     GetCallerIdentity URL that names the cluster in the signed x-k8s-aws-id header. A token is reused
//     until shortly before its 15-minute validity ends and regenerated after; a 401 from the API server
//     drops the cached token. RESTConfig builds a client-go configuration that speaks protobuf and
//     allows the bursts a Lambda invocation makes.
//   - Snapshot (snapshot.go, listing.go): one consistent read of everything the scheduler and disruption
//     logic need. Nodes are listed before pods; every list is paginated and read whole or not at all: any
//     error returns ErrIncomplete and no data, so a caller can never decide on a partial cluster. Node
//     and pod lists are streamed as protobuf and decoded while the next page is being fetched. A warm
//     Snapshotter keeps every kind it reads as a view (view.go, viewread.go, kindview.go) and reads only
//     what changed since its last snapshot.
//   - Actions (actions.go, eviction.go): idempotent taint, untaint, label and cordon of Nodes; pod eviction
//     through the Eviction API that reports a PodDisruptionBudget refusal as a Blocked result at once
//     (client-go's Retry-After loop is switched off for it); pod and Node deletion. Gone objects are
//     success where the caller wanted them gone.
//   - Events (events.go): core/v1 Events with Karpenter's reasons, deduplicated per object, reason and
//     message within a window and rate-limited, on an injected clock.
//   - Admission (admission.go): decoding of admission.k8s.io/v1 AdmissionReview requests for pods and
//     encoding of the always-allowed response the webhook returns.
//
// Errors from the API server are turned into the domain errors of errors.go in one place; test them with
// the IsX helpers. The original client-go error stays reachable with errors.As.
package kube
