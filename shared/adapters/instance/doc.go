// Package instance is the EC2 adapter that launches, finds and terminates the instances behind claims.
//
// A launch is one CreateFleet of type instant for one instance: the overrides are the cheapest instance
// types × zones the scheduler chose (at most 60 types), spot with price-capacity-optimized or on-demand
// with lowest-price, the claim name as ClientToken, and tags that tie the instance to its cluster, node
// pool, node class and claim on the instance, its volumes and the fleet, plus karpenter.sh/nodepool for
// cost allocation reports but never the rest of what Karpenter's garbage collection takes an instance by
// (karpenter.go). NameInstance adds the Name tag once the Node's name is known. Because a retried launch must
// never launch twice even where the token is not honoured (moto ignores it), Launch first looks for an
// instance already tagged with the claim and adopts it.
//
// errors.go turns EC2's error codes into what the caller does next: an InsufficientCapacityError lists
// the offerings to mark unavailable; a LaunchError says whether to retry (throttled, transient), stop
// (quota, unauthorized, invalid request) or recreate the launch template.
package instance
