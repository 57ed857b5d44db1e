package mirror

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// ConditionTypeValidationSucceeded is the EC2NodeClass condition that says its configuration is valid:
// Nodewright validates a class before it stores it, so a stored class is valid.
const ConditionTypeValidationSucceeded = "ValidationSucceeded"

// Class is what the EC2NodeClass mirror of one configured class is built from.
type Class struct {
	// EC2NodeClass is the class as stored in the configuration.
	EC2NodeClass *apis.EC2NodeClass
	// Status is the class resolved against the account this run (shared/adapters/nodeclass: subnets, security
	// groups, AMIs, instance profile, capacity reservations and their *Ready conditions).
	Status apis.EC2NodeClassStatus
}

// EC2NodeClass builds the EC2NodeClass mirror of a resolved class: its spec as configured; its status
// as resolved, with Karpenter's conditions SubnetsReady, SecurityGroupsReady, AMIsReady,
// InstanceProfileReady (and CapacityReservationsReady when it selects reservations) as the resolution gave
// them, ValidationSucceeded, and Ready: True when every other condition is, else False with the reason
// and message of the first that is not. Conditions are dated now unless the resolution dated them.
func EC2NodeClass(in Class, now time.Time) Object {
	nc := in.EC2NodeClass
	st := in.Status
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	conds := make([]metav1.Condition, 0, len(st.Conditions)+2)
	for _, c := range st.Conditions {
		if c.Type == apis.ConditionTypeReady {
			continue
		}
		c.ObservedGeneration = 0
		c.LastTransitionTime = at
		conds = append(conds, c)
	}
	conds = append(conds, metav1.Condition{Type: ConditionTypeValidationSucceeded, Status: metav1.ConditionTrue,
		Reason: ConditionTypeValidationSucceeded, LastTransitionTime: at})
	ready := metav1.Condition{Type: apis.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: apis.ConditionTypeReady, LastTransitionTime: at}
	var notReady []string
	for _, c := range conds {
		if c.Status == metav1.ConditionTrue {
			continue
		}
		if len(notReady) == 0 {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, c.Reason, c.Message
		}
		notReady = append(notReady, c.Type)
	}
	if len(notReady) > 1 {
		ready.Message += " (not ready: " + strings.Join(notReady, ", ") + ")"
	}
	st.Conditions = append(conds, ready)
	labels := map[string]string{}
	for k, v := range nc.Labels {
		labels[k] = v
	}
	return Object{Name: nc.Name, Labels: labels, Spec: nc.Spec, Status: st}
}
