package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/nodewright/nodewright/shared/core/settings"
)

// KindSettings is the kind of the one configuration item that holds the deployment's settings
// (settings.Settings as JSON), SettingsName its name. The CDK app writes it with the NodePools and
// EC2NodeClasses; `nodewright apply` leaves it alone.
const (
	KindSettings = "Settings"
	SettingsName = "cluster"
)

// SettingsItem is the configuration item of s. Callers validate s first (settings.Settings.Validate).
func SettingsItem(s settings.Settings) (ConfigItem, error) {
	spec, err := json.Marshal(s)
	if err != nil {
		return ConfigItem{}, fmt.Errorf("encoding settings: %w", err)
	}
	sum := sha256.Sum256(spec)
	return ConfigItem{Kind: KindSettings, Name: SettingsName, SpecHash: hex.EncodeToString(sum[:16]), Spec: string(spec)}, nil
}
