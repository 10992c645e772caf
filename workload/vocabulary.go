package workload

// vocabulary is a list of common English words that most LLM tokenizers encode as a single
// token each, so that synthetic prompts need few tokenizer round trips to hit an exact length.
var vocabulary = []string{
	"the", "of", "and", "to", "in", "is", "was", "for", "that", "on", "as", "with", "by", "he",
	"at", "from", "his", "an", "were", "are", "which", "this", "be", "or", "has", "had", "first",
	"one", "their", "its", "new", "after", "but", "who", "not", "they", "have", "her", "she",
	"two", "been", "other", "when", "there", "all", "during", "into", "school", "time", "may",
	"years", "more", "most", "only", "over", "city", "some", "world", "would", "where", "later",
	"up", "such", "used", "many", "can", "state", "about", "national", "out", "known", "university",
	"united", "then", "made", "also", "team", "him", "series", "three", "season", "war", "film",
	"between", "both", "year", "under", "him", "north", "since", "while", "game", "same", "each",
	"south", "well", "work", "public", "house", "through", "early", "home", "number", "group",
	"life", "part", "high", "water", "music", "family", "name", "area", "long", "system", "west",
	"place", "church", "league", "day", "river", "line", "before", "second", "until", "four",
	"county", "old", "major", "around", "best", "small", "large", "court", "power", "party",
	"club", "began", "album", "song", "members", "following", "built", "held", "east", "government",
	"played", "around", "back", "until", "station", "company", "local", "people", "could", "district",
	"general", "president", "former", "became", "released", "than", "several", "including", "music",
	"village", "these", "based", "order", "field", "book", "market", "road", "land", "light", "king",
}
