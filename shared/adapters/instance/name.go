package instance

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TagName is the tag the EC2 console, Cost Explorer and most tools show as an instance's name. Karpenter
// sets it to the Node's name once a NodeClaim registers; so does Nodewright's lifecycle. On EKS the Node's
// name is the instance's private DNS name (or its resource name), which the kubelet picks at boot, so it
// is known only when the Node has joined, never at launch.
const TagName = "Name"

// NameInstance sets the instance's Name tag to node, and no other tag (the lifecycle role may add only
// this key, on the cluster's own instances).
func (l *Launcher) NameInstance(ctx context.Context, id, node string) error {
	if node == "" {
		return errors.New("naming instance " + id + ": no node name")
	}
	_, err := l.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id},
		Tags: []ec2types.Tag{{Key: aws.String(TagName), Value: aws.String(node)}}})
	if err != nil {
		return fromAPIError("naming instance "+id+" "+node, err)
	}
	return nil
}
