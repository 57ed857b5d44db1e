// Package apis holds Nodewright's configuration types: Karpenter's v1 NodePool (karpenter.sh/v1),
// EC2NodeClass (karpenter.k8s.aws/v1) and alpha NodeOverlay (karpenter.sh/v1alpha1), read unchanged from the YAML users already run with Karpenter, and
// the NodeClaim record Nodewright keeps for every node it launches.
//
// The package is pure: it imports only the standard library, k8s.io/api, k8s.io/apimachinery,
// sigs.k8s.io/yaml, sigs.k8s.io/json (the strict decoder apimachinery itself uses) and robfig/cron.
// It never talks to AWS or Kubernetes and never reads the clock.
//
// A manifest goes through four steps, each in its own file:
//
//   - Decode (decode.go) splits multi-document YAML or JSON (including List kinds) and decodes each
//     object strictly: unknown or duplicate fields, type errors and unknown apiVersion/kind are errors
//     naming the file and the document.
//   - SetDefaults (defaults.go) applies the defaults Karpenter's CRDs apply (expireAfter 720h,
//     consolidationPolicy WhenEmptyOrUnderutilized, consolidateAfter 0s, budgets [{nodes: 10%}],
//     metadataOptions …).
//   - ValidateNodePool / ValidateEC2NodeClass / ValidateNodeOverlay (validation_*.go) enforce every OpenAPI pattern, enum,
//     bound and CEL rule of Karpenter's CRDs plus the rules its controllers check at runtime, returning a
//     field.ErrorList whose messages read like kubectl's. Fields Karpenter marks new or feature-gated are
//     validated too, and then refused with "not supported yet by nodewright" until Nodewright implements
//     them (unsupported.go) — a manifest is never accepted with a setting silently ignored.
//   - NodePoolTemplateHash / EC2NodeClassHash (hash.go) give the versioned static-drift hashes, computed
//     over a canonical encoding of the defaulted object, so field order and defaulted-versus-explicit
//     values never change them.
//
// Reading files and directories is left to the sub-package manifest, whose Check runs the steps above over
// a set of paths for the CLI and the CDK app.
package apis
