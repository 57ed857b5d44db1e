package state

// DetailPrices is the decision detail WithPriceNote fills.
const DetailPrices = "prices"

// priceDetails are the details that show a decision rests on prices: a launch's hourly price, a
// disruption command's savings.
var priceDetails = []string{"pricePerHour", "savingsPerHour"}

// WithPriceNote adds note as the detail DetailPrices of every decision that rests on prices (one whose
// details carry pricePerHour or savingsPerHour), so whoever reads it knows what priced it: a function
// isolated from the internet says it priced with the shipped table and never called the Pricing API
// (pricing.Provider.DecisionNote). An empty note adds nothing.
func WithPriceNote(note string) Option { return func(s *Store) { s.priceNote = note } }

func restsOnPrices(details map[string]string) bool {
	for _, k := range priceDetails {
		if _, ok := details[k]; ok {
			return true
		}
	}
	return false
}
