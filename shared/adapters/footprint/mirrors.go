package footprint

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// MirrorPolicyName names the ValidatingAdmissionPolicy that keeps the mirrors read-only, and its binding.
const MirrorPolicyName = "nodewright-mirrors-read-only"

// MirrorWriters are the functions that write mirrors: the provisioner writes the NodeClaim mirror of
// each claim it launches, as soon as the launch is recorded (provisioning.LaunchMirrors); the lifecycle
// function keeps every NodeClaim mirror from there (it reads every claim and Node each sweep); the
// disruption function writes the NodePool and EC2NodeClass mirrors (it reads the claims, the Nodes and
// the configuration, and resolves every EC2NodeClass, each minute). The disruption, interruption and
// termination functions also write the NodeClaim mirrors of the claims whose disruption state they have
// just changed (mirror.Follower: a GET, then an update of the mirror and its status, or its creation).
// Only their groups may change a mirror, each only the kinds it writes.
func MirrorWriters() []Function {
	return []Function{Provisioner, Lifecycle, Disruption, Interruption, Termination}
}

// MirroredBy are the mirrored kinds f writes.
func MirroredBy(f Function) []mirror.Kind {
	switch f {
	case Provisioner, Lifecycle, Interruption, Termination:
		return []mirror.Kind{mirror.NodeClaims}
	case Disruption:
		return []mirror.Kind{mirror.NodeClaims, mirror.NodePools, mirror.EC2NodeClasses}
	}
	return nil
}

// mirrorWrites is what a mirror writer's role adds for the kinds it writes: it learns the mirrors with a
// metadata LIST and follows them with a watch, server-side applies them and their status (a PATCH, which
// creates the object the first time), replaces a mirror someone else changed (a GET, then an update of it
// and of its status with the revision read) and deletes the mirrors whose claim, NodePool or class is gone.
func mirrorWrites(f Function) []rbacRule {
	switch f {
	case Provisioner:
		return launchMirrorWrites
	case Interruption, Termination:
		return followMirrorWrites
	}
	var out []rbacRule
	for _, k := range MirroredBy(f) {
		if f == Disruption && k.Plural == mirror.NodeClaims.Plural {
			out = append(out, followMirrorWrites...)
			continue
		}
		out = append(out,
			rbacRule{resources: []string{k.Plural}, verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			rbacRule{resources: []string{k.Plural + "/status"}, verbs: []string{"update", "patch"}})
	}
	return out
}

// launchMirrorWrites is what the provisioner's role adds: its writer learns the mirrors with a metadata
// LIST once per process, server-side applies each new mirror and its status (a PATCH that creates the
// object) and, for a mirror whose content it cannot tell (someone else wrote it), replaces it (a GET,
// then an update of it and of its status). It never watches the mirrors nor deletes one.
var launchMirrorWrites = []rbacRule{
	{resources: []string{mirror.NodeClaims.Plural}, verbs: []string{"get", "list", "create", "update", "patch"}},
	{resources: []string{mirror.NodeClaims.Plural + "/status"}, verbs: []string{"update", "patch"}},
}

// followMirrorWrites is what the roles of the functions that follow a claim's change to its NodeClaim
// mirror add (mirror.Follower): a GET of the mirror, an update of its status and of the object over the
// revision read, and, for a mirror that does not exist yet, a server-side apply that creates it. They
// never list, watch or delete a mirror.
var followMirrorWrites = []rbacRule{
	{resources: []string{mirror.NodeClaims.Plural}, verbs: []string{"get", "create", "update", "patch"}},
	{resources: []string{mirror.NodeClaims.Plural + "/status"}, verbs: []string{"update", "patch"}},
}

type rbacRule struct{ resources, verbs []string }

// mirrorResources are every mirrored resource and its status, which the policy guards.
func mirrorResources() []string {
	var out []string
	for _, k := range mirror.Kinds() {
		out = append(out, k.Plural, k.Plural+"/status")
	}
	return out
}

// mirrorValidation lets each mirror writer's group write the kinds it writes (and their status), and
// anyone RBAC lets delete a NodeClaim delete one (Karpenter's `kubectl delete nodeclaim`: a disruption
// request). The mirror's finalizer (mirror.Finalizer) keeps it Terminating until its claim is gone;
// removing the finalizer is an UPDATE, which only the writers' groups may make, so a user can ask for the
// removal but not cut it short (the API server's own marking of the deletion is not an admission
// request). request.userInfo.groups and request.subResource are absent when empty, hence has().
func mirrorValidation() string {
	var writers []string
	for _, f := range MirrorWriters() {
		var plurals []string
		for _, k := range MirroredBy(f) {
			plurals = append(plurals, "'"+k.Plural+"'")
		}
		writers = append(writers, fmt.Sprintf(`(request.resource.resource in [%s] && request.userInfo.groups.exists(g, g == '%s'))`,
			strings.Join(plurals, ", "), f.Group()))
	}
	return fmt.Sprintf(`(has(request.userInfo.groups) && (%s)) || `+
		`(request.operation == 'DELETE' && request.resource.resource == '%s' && (!has(request.subResource) || request.subResource == ''))`,
		strings.Join(writers, " || "), mirror.NodeClaims.Plural)
}

// MirrorPolicyMessage is what a refused writer is told.
const MirrorPolicyMessage = "NodeClaims, NodePools and EC2NodeClasses of nodewright.sh are read-only mirrors of Nodewright's state, " +
	"written only by its functions: change NodePools and EC2NodeClasses in the stack's manifests (or with `nodewright apply`), " +
	"and remove a node with `kubectl delete nodeclaims.nodewright.sh NAME` or `nodewright disrupt` (its finalizer is removed once the node is gone)"

// MirrorPolicy is the ValidatingAdmissionPolicy (CEL, evaluated in the API server: no webhook) that
// refuses every CREATE, UPDATE (patches and applies included) and DELETE of a mirror, or of its status,
// by anyone outside the mirror writers' groups, except a DELETE of a NodeClaim. failurePolicy Fail: the
// expression is the API server's own, so a failure is a defect to see, not an outage to ride out.
func MirrorPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	equivalent := admissionregistrationv1.Equivalent
	scope := admissionregistrationv1.ClusterScope
	forbidden := metav1.StatusReasonForbidden
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: MirrorPolicyName, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				MatchPolicy: &equivalent,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create,
							admissionregistrationv1.Update, admissionregistrationv1.Delete},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{mirror.Group}, APIVersions: []string{"*"},
							Resources: mirrorResources(), Scope: &scope},
					},
				}},
			},
			// Forbidden (403), as RBAC answers; a policy's denial is Invalid (422) unless it says otherwise.
			Validations: []admissionregistrationv1.Validation{{Expression: mirrorValidation(), Message: MirrorPolicyMessage, Reason: &forbidden}},
		},
	}
}

// MirrorPolicyBinding puts MirrorPolicy in force, denying what it refuses.
func MirrorPolicyBinding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: MirrorPolicyName, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        MirrorPolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

// Mirrors is the mirror CRDs, then the policy and its binding: what `nodewright manifests` prints before
// the RBAC.
func Mirrors() []any {
	var out []any
	for _, c := range mirror.CRDs() {
		out = append(out, c)
	}
	return append(out, MirrorPolicy(), MirrorPolicyBinding())
}
