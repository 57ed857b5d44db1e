package interruption_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func event(version, source, detailType, detail string) string {
	return `{"version":"` + version + `","id":"e-1","detail-type":"` + detailType + `","source":"` + source +
		`","account":"210987654321","time":"2026-11-20T14:03:11Z","region":"us-west-2","resources":[],"detail":` + detail + `}`
}

func TestParse(t *testing.T) {
	const instance = `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"terminate","state":"stopped"}`
	const health = `{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"i-0c4f8a2d61b7e9035"}]}`
	tests := []struct {
		name     string
		body     string
		wantKind messages.Kind
		wantErr  string
	}{
		{name: "spot", body: event("0", "aws.ec2", "EC2 Spot Instance Interruption Warning", instance), wantKind: messages.SpotInterruptionKind},
		{name: "rebalance", body: event("0", "aws.ec2", "EC2 Instance Rebalance Recommendation", instance), wantKind: messages.RebalanceRecommendationKind},
		{name: "state change", body: event("0", "aws.ec2", "EC2 Instance State-change Notification", instance), wantKind: messages.InstanceStoppedKind},
		{name: "capacity reservation", body: event("0", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning", instance), wantKind: messages.CapacityReservationInterruptionKind},
		{name: "scheduled change", body: event("0", "aws.health", "AWS Health Event", health), wantKind: messages.ScheduledChangeKind},
		{name: "unknown detail-type", body: event("0", "aws.ec2", "EC2 AMI State Change", `{}`), wantErr: "unknown kind"},
		{name: "detail-type under another source", body: event("0", "aws.health", "EC2 Spot Instance Interruption Warning", instance), wantErr: "unknown kind"},
		{name: "detail-type case matters", body: event("0", "aws.ec2", "ec2 spot instance interruption warning", instance), wantErr: "unknown kind"},
		{name: "unknown version", body: event("1", "aws.ec2", "EC2 Spot Instance Interruption Warning", instance), wantErr: "unknown kind"},
		{name: "malformed envelope", body: `{"id":"e-1"`, wantErr: "malformed"},
		{name: "malformed detail", body: event("0", "aws.ec2", "EC2 Spot Instance Interruption Warning", `{"instance-id":7}`), wantErr: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := interruption.Parse([]byte(tt.body))
			switch tt.wantErr {
			case "unknown kind":
				var u *messages.UnknownKindError
				require.True(t, errors.As(err, &u), "got %v", err)
				assert.Equal(t, "e-1", u.EventID)
				assert.Nil(t, msg)
			case "malformed":
				assert.True(t, messages.IsMalformed(err), "got %v", err)
				assert.Nil(t, msg)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.wantKind, msg.Kind())
				assert.Equal(t, "e-1", msg.EventID())
				assert.Equal(t, []string{"i-0c4f8a2d61b7e9035"}, msg.InstanceIDs())
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	routes := interruption.Routes()
	require.Len(t, routes, 5)
	for _, r := range routes {
		_, err := interruption.Parse([]byte(event("0", r.Source, r.DetailType, `{}`)))
		assert.False(t, messages.IsUnknownKind(err), "route %v has no parser", r)
		assert.True(t, strings.HasPrefix(r.Source, "aws."))
	}
}
