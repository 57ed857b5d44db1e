package footprint

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AwaitGranted waits until the API server's authorizer grants user, a member of f's group, every verb of
// f's ClusterRole. RBAC is served from watch caches, so a role and binding that were just created are not
// in force at once; callers that create them and act as the function straight after wait here first.
func AwaitGranted(ctx context.Context, c kubernetes.Interface, f Function, user string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		missing, err := ungranted(ctx, c, f, user)
		if err == nil && missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("waiting for the %s function's RBAC grant: %w", f, err)
			}
			return fmt.Errorf("the %s function's RBAC grant is not in force after %s: %s is still denied", f, timeout, missing)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ungranted names the first verb of f's ClusterRole that user is not yet granted, or "" when all are.
func ungranted(ctx context.Context, c kubernetes.Interface, f Function, user string) (string, error) {
	for _, a := range Grants(f) {
		review, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{f.Group(), "system:authenticated"}, ResourceAttributes: &a},
		}, metav1.CreateOptions{})
		if err != nil {
			return "", err
		}
		if !review.Status.Allowed {
			return a.Verb + " " + a.Group + "/" + a.Resource + "/" + a.Subresource, nil
		}
	}
	return "", nil
}

// Grant creates f's ClusterRole and binding (leaving them be when they exist, as a test binary's shared
// control plane may have them already) and waits until user, in f's group, is granted them.
func Grant(ctx context.Context, c kubernetes.Interface, f Function, user string) error {
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, ClusterRole(f), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the %s function's ClusterRole: %w", f, err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, ClusterRoleBinding(f), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding the %s function's ClusterRole: %w", f, err)
	}
	return AwaitGranted(ctx, c, f, user, 30*time.Second)
}
