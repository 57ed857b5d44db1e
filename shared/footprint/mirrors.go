package footprint

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/mirror"
)

// MirrorPolicyName names the ValidatingAdmissionPolicy that keeps the mirrors read-only, and its binding.
const MirrorPolicyName = "nodewright-mirrors-read-only"

// MirrorWriters are the functions that write mirrors: the provisioner writes the NodeClaim mirror of
// each claim it launches, as soon as the launch is recorded (provisioning.LaunchMirrors), and the
// lifecycle function keeps every NodeClaim mirror from there (it reads every claim and Node each sweep).
// Only their groups may change a mirror.
func MirrorWriters() []Function { return []Function{Provisioner, Lifecycle} }

// mirrorRules is what writing mirrors adds to f's role.
func mirrorRules(f Function) []rbacRule {
	switch f {
	case Lifecycle:
		return mirrorWrites
	case Provisioner:
		return launchMirrorWrites
	}
	return nil
}

// mirrorWrites is what a mirror writer's role adds: it learns the mirrors with a metadata LIST and
// follows them with a watch, server-side applies them and their status (a PATCH, which creates the
// object the first time), replaces a mirror someone else changed (a GET, then an update of it and of its
// status with the revision read) and deletes the mirrors whose claim is gone.
var mirrorWrites = []rbacRule{
	{resources: []string{mirror.NodeClaims.Plural}, verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	{resources: []string{mirror.NodeClaims.Plural + "/status"}, verbs: []string{"update", "patch"}},
}

// launchMirrorWrites is what the provisioner's role adds: its writer learns the mirrors with a metadata
// LIST once per process, server-side applies each new mirror and its status (a PATCH that creates the
// object) and, for a mirror whose content it cannot tell (someone else wrote it), replaces it (a GET,
// then an update of it and of its status). It never watches the mirrors nor deletes one.
var launchMirrorWrites = []rbacRule{
	{resources: []string{mirror.NodeClaims.Plural}, verbs: []string{"get", "list", "create", "update", "patch"}},
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

// mirrorValidation lets through the mirror writers' groups, and a DELETE of a NodeClaim by anyone RBAC
// lets delete it (Karpenter's `kubectl delete nodeclaim`: a disruption request, once that flow reads it;
// until then the next sweep writes the mirror again). request.userInfo.groups and request.subResource are
// absent when empty, hence has().
func mirrorValidation() string {
	groups := make([]string, 0, len(MirrorWriters()))
	for _, f := range MirrorWriters() {
		groups = append(groups, "'"+f.Group()+"'")
	}
	return fmt.Sprintf(`(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in [%s])) || `+
		`(request.operation == 'DELETE' && request.resource.resource == '%s' && (!has(request.subResource) || request.subResource == ''))`,
		strings.Join(groups, ", "), mirror.NodeClaims.Plural)
}

// MirrorPolicyMessage is what a refused writer is told.
const MirrorPolicyMessage = "NodeClaims, NodePools and EC2NodeClasses of nodewright.sh are read-only mirrors of Nodewright's state, " +
	"written only by its functions: change NodePools and EC2NodeClasses in the stack's manifests (or with `nodewright apply`), " +
	"and remove a node with `nodewright disrupt`"

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
