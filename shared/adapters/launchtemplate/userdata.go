package launchtemplate

import (
	"errors"
	"fmt"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// ErrUnsupportedFamily is returned for AMI families Nodewright cannot write user data for yet.
var ErrUnsupportedFamily = errors.New("AMI family not supported yet")

// UserData renders a node's user data (plain text, not base64) for o.Family:
//   - AL2023: a MIME document with the user's parts, then a nodeadm NodeConfig;
//   - Bottlerocket: the user's TOML with Nodewright's settings.kubernetes merged in;
//   - AL2: a MIME document with the user's parts, then a shell part calling /etc/eks/bootstrap.sh;
//   - Custom: the user's user data unchanged (the AMI must join the cluster on its own);
//   - Windows2019/2022/2025: ErrUnsupportedFamily.
func UserData(o Options) (string, error) {
	switch o.Family {
	case apis.AMIFamilyAL2023:
		return al2023UserData(o)
	case apis.AMIFamilyBottlerocket:
		return bottlerocketUserData(o)
	case apis.AMIFamilyAL2:
		return al2UserData(o)
	case apis.AMIFamilyCustom:
		return o.UserData, nil
	case apis.AMIFamilyWindows2019, apis.AMIFamilyWindows2022, apis.AMIFamilyWindows2025:
		return "", fmt.Errorf("user data for %s: %w", o.Family, ErrUnsupportedFamily)
	default:
		return "", fmt.Errorf("user data for unknown AMI family %q: %w", o.Family, ErrUnsupportedFamily)
	}
}
