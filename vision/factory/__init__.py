"""The model factory: training the localiser and the classifier, quantizing and shipping them, measuring them
and writing the model card. Serving never imports it; it opens the ``.onnx`` files the factory ships."""
