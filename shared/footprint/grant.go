package footprint

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AwaitGranted waits until the API server's authorizer grants user, a member of Group, every rule of
// ClusterRole. RBAC is served from watch caches, so a role and binding that were just created are not in
// force at once; callers that create them and act as the functions straight after wait here first.
func AwaitGranted(ctx context.Context, c kubernetes.Interface, user string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		missing, err := ungranted(ctx, c, user)
		if err == nil && missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("waiting for the functions' RBAC grant: %w", err)
			}
			return fmt.Errorf("the functions' RBAC grant is not in force after %s: %s is still denied", timeout, missing)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ungranted names the first rule of ClusterRole that user is not yet granted, or "" when all are.
func ungranted(ctx context.Context, c kubernetes.Interface, user string) (string, error) {
	for _, rule := range ClusterRole().Rules {
		resource, sub, _ := strings.Cut(rule.Resources[0], "/")
		attrs := &authorizationv1.ResourceAttributes{Group: rule.APIGroups[0], Resource: resource, Subresource: sub, Verb: rule.Verbs[0]}
		review, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{Group, "system:authenticated"}, ResourceAttributes: attrs},
		}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		if !review.Status.Allowed {
			return fmt.Sprintf("%s %s", rule.Verbs[0], rule.Resources[0]), nil
		}
	}
	return "", nil
}
