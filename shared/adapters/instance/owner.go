package instance

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// Ownership is what an instance's tags say about who launched it.
type Ownership struct {
	// Known is false when EC2 does not know the id (yet: EC2 is eventually consistent right after a
	// launch).
	Known bool
	// Ours is true when the instance carries this cluster's nodewright.sh/cluster tag.
	Ours bool
	// Claim is the nodewright.sh/nodeclaim tag ("" until a batch launch has tagged the instance).
	Claim string
}

// OwnerOf asks EC2, by id and in any state, whether the instance is this cluster's and which claim it was
// launched for. It reads the instance's tags, which are written at launch, so it does not depend on the
// state table having recorded the instance yet.
func (l *Launcher) OwnerOf(ctx context.Context, id string) (Ownership, error) {
	out, err := l.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if notFound(err) {
		return Ownership{}, nil
	}
	if err != nil {
		return Ownership{}, fromAPIError("describing "+id, err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			inst := fromEC2(i)
			return Ownership{Known: true, Ours: inst.Tags[TagCluster] == l.cluster, Claim: inst.Tags[TagNodeClaim]}, nil
		}
	}
	return Ownership{}, nil
}
