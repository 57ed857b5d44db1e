package footprint

import (
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// Grants spells out every verb on every resource f's ClusterRole allows, one access check each.
func Grants(f Function) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, rule := range Rules(f) {
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				resource, sub, _ := strings.Cut(r, "/")
				for _, v := range rule.Verbs {
					out = append(out, authorizationv1.ResourceAttributes{Group: g, Resource: resource, Subresource: sub, Verb: v})
				}
			}
		}
	}
	return out
}
