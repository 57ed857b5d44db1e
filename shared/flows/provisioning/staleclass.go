package provisioning

import (
	"errors"

	"github.com/aws/smithy-go"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// forgetStaleClasses drops the cached resolution of each class a launch failed on because EC2 or IAM
// said a resolved value is gone (nodeclass.StaleAnswer), so the next run resolves that class again
// rather than launching into a deleted subnet for the rest of the cache's age.
func (p *Provisioner) forgetStaleClasses(failures []LaunchFailure, byPool map[string]scheduling.NodePool) {
	forgetter, ok := p.deps.NodeClasses.(ClassForgetter)
	if !ok {
		return
	}
	for _, f := range failures {
		pool, known := byPool[f.NodePool]
		if known && staleAnswer(f.Err) {
			forgetter.Forget(NodeClassRefName(pool))
		}
	}
}

// staleAnswer reports whether err carries an AWS answer that a resolved value is gone: a classified
// launch error, an offering a fleet refused, or any API error in its chain.
func staleAnswer(err error) bool {
	if err == nil {
		return false
	}
	var le *instance.LaunchError
	if errors.As(err, &le) && nodeclass.StaleAnswer(le.Code, le.Message) {
		return true
	}
	var oe *instance.OfferingsError
	if errors.As(err, &oe) {
		for _, r := range oe.Rejected {
			if nodeclass.StaleAnswer(r.Code, r.Message) {
				return true
			}
		}
	}
	var api smithy.APIError
	return errors.As(err, &api) && nodeclass.StaleAnswer(api.ErrorCode(), api.ErrorMessage())
}
